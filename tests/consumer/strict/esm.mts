// The same package from an ES module (`.mts`): the root and both Node-only subpaths resolve to
// their declarations under node16, nodenext and bundler (see types.ts).
import {bucket, PartkitError} from 'partkit';
import {KafkaTaskSync, type KafkaTaskSyncOptions} from 'partkit/kafka';
import {listPartition, type S3Source} from 'partkit/s3';
import {Kafka} from 'kafkajs';

export const b: number = bucket('test-key', 'test-data', 5);
const options: KafkaTaskSyncOptions = {kafka: new Kafka({brokers: ['kafka1:9092']}), connectorName: 'orders', taskId: 't1', syncOptions: {stateRefreshInterval: undefined}};
export const sync = new KafkaTaskSync(options);
const source: S3Source = {bucket: 'b', key: undefined};
export const list = listPartition({send: async () => ({})}, source, 4, 0);
export const isPartkit = (e: unknown): boolean => e instanceof PartkitError;
