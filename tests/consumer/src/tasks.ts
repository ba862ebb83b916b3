// A connector task coordinated over Kafka: type-checks KafkaTaskSync's declarations against kafkajs'.
import {Kafka} from 'kafkajs';
import {KafkaRebalanceEvent, KafkaTaskSync, KafkaTaskSyncOptions, kafkaTopicNames} from 'partkit/kafka';

export function makeTask(kafka: Kafka, taskId: string, extra: Partial<KafkaTaskSyncOptions> = {}): KafkaTaskSync {
  const sync = new KafkaTaskSync({kafka, connectorName: 'orders', taskId, sessionTimeout: 10000, ...extra});
  const reading = new Set<string>();
  sync.on('start', (token) => {
    reading.add(token);
    sync.partitionStarted(token);
  });
  sync.on('stop', async (token: string) => {
    reading.delete(token);
  });
  sync.on('rebalance', (e: KafkaRebalanceEvent) => void e.generation);
  sync.on('error', (e) => {
    throw e;
  });
  return sync;
}

export const topics = kafkaTopicNames('orders');
