import {Kafka, logLevel} from 'kafkajs';
import {SyncError} from 'partkit';
import {makeTask, topics} from '../src/tasks';

describe('KafkaTaskSync from the packed tarball', () => {
  const kafka = new Kafka({brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING});

  it('names the topics after the connector', () => {
    expect(topics).toEqual({sync: 'orders_connector_sync', heartbeat: 'orders_connector_heartbeat'});
  });

  it("builds partkit's SyncTask by default, without touching the network", () => {
    const sync = makeTask(kafka, 't1');
    expect(sync.state).toBe('new');
    expect(sync.epoch()).toBeUndefined();
    expect(sync.syncTopic).toBe('orders_connector_sync');
  });

  it('checks its options with SyncError', () => {
    expect(() => makeTask(kafka, '')).toThrow(SyncError);
    expect(() => makeTask(kafka, 't1', {heartbeatInterval: 20000})).toThrow('options.heartbeatInterval must be lower than options.sessionTimeout');
  });
});
