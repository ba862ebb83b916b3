// Refusals in the user's words: the argument or field path in JS terms, what was expected in JS
// words, what was given; never serde's or Rust's words. Unknown option keys are refused the same
// way everywhere, with the nearest known key suggested. Go's almost-sure mistakes get a warning.
const p = require('partkit');
const {thrown} = require('./support/thrown');

const RUST_WORDS = /invalid type|invalid value|\bu64\b|\bu32\b|\bi64\b|line \d+ column \d+|a undefined|expected a sequence|struct |a map\b/;

describe('messages name the field, in JS words', () => {
  test('SyncTask options: options.rebalanceTimeout, a non-negative integer of milliseconds', () => {
    const e = thrown(() => new p.SyncTask('t', {rebalanceTimeout: -5}));
    expect(e).toBeInstanceOf(p.SyncError);
    expect(e.code).toBe('SYNC_INVALID_OPTIONS');
    expect(e.message).toBe('invalid options: options.rebalanceTimeout must be a non-negative integer of milliseconds, got the number -5');
    expect(thrown(() => new p.SyncTask('t', {epochAckTimeout: '5s'})).message).toContain('options.epochAckTimeout must be a non-negative integer of milliseconds, got the string "5s"');
  });

  test('SyncTask options: an unknown key suggests the nearest known one', () => {
    const e = thrown(() => new p.SyncTask('t', {rebalanceTimeOut: 5}));
    expect(e.code).toBe('SYNC_INVALID_OPTIONS');
    expect(e.message).toContain('options.rebalanceTimeOut is not a known key: did you mean options.rebalanceTimeout?');
  });

  test("onRebalance: leader given as kafkajs' leader id", () => {
    const task = new p.SyncTask('t1');
    const e = thrown(() => task.onRebalance({generation: 1, leader: 't1', members: ['t1']}, 1));
    expect(e.code).toBe('SYNC_INVALID_REBALANCE');
    expect(e.message).toMatch(/^invalid rebalance: event\.leader must be a boolean .*, got the string "t1"$/);
    expect(thrown(() => task.onRebalance({generation: 1, leader: true, members: ['t1'], timestamp: new Date()}, 1)).message)
      .toContain('event.timestamp is not a known key');
    expect(thrown(() => task.onRebalance({generationId: 1, leader: true}, 1)).message).toContain('did you mean event.generation?');
    expect(thrown(() => task.onRebalance({generation: -1, leader: true}, 1)).message).toContain('event.generation must be a non-negative integer, got the number -1');
    expect(thrown(() => task.onRebalance({generation: 1, leader: true, members: ['a', 2]}, 1)).message).toContain('event.members[1] must be a string');
  });

  test('addPartitions and onMessage: the path of the field', () => {
    const task = new p.SyncTask('t1');
    task.onRebalance({generation: 1, leader: true, members: ['t1']}, 1);
    const e = thrown(() => task.addPartitions([{token: 'a'}, {token: 'b', parents: 'a'}], 2));
    expect(e.code).toBe('SYNC_INVALID_PARTITION');
    expect(e.message).toBe('invalid partition: partitions[1].parents must be an array, got the string "a"');
    const m = thrown(() => task.onMessage({type: 'Nope', taskID: 'x'}, 3));
    expect(m.code).toBe('SYNC_MALFORMED_MESSAGE');
    expect(m.message).not.toMatch(RUST_WORDS);
    expect(m.message).toContain('message');
  });

  test('lifecycle events: events[12].timestamp', () => {
    const events = Array.from({length: 12}, (_, i) => ({type: 'WantCreate', timestamp: i + 1, wantId: `w${i}`, partitions: [`r${i}`]}));
    events.push({type: 'WantCreate', timestamp: new Date('2026-01-02T03:04:05Z'), wantId: 'w12', partitions: ['r12']});
    const e = thrown(() => p.BuildState.replay(events));
    expect(e.code).toBe('INVALID_EVENT');
    expect(e.eventIndex).toBe(12);
    expect(e.message).toBe('event 12: invalid event: events[12].timestamp must be a non-negative integer, got the string "2026-01-02T03:04:05.000Z"');
    const state = new p.BuildState();
    expect(thrown(() => state.apply({type: 'WantCreate', timestamp: 1, wantID: 'w', partitions: ['r']})).message)
      .toContain('event.wantID is not a known key: did you mean event.wantId?');
    expect(thrown(() => state.apply({type: 'WantCreated', timestamp: 1})).message).toMatch(/event\.type must be one of 'WantCreate', .*got "WantCreated"/);
    expect(thrown(() => state.apply({type: 'WantCreate', timestamp: 1, partitions: ['r']})).message).toContain('event.wantId is missing');
  });

  test('no message says "a undefined"', () => {
    expect(thrown(() => p.bucket(undefined, 'x', 3)).message).toBe('key must be a string, got undefined');
  });
});

describe('unknown option keys are refused in every domain the same way', () => {
  const cases = [
    ['assignImportBuckets', () => p.assignImportBuckets([{datasetName: 'd'}], {bucket: 3}), 'options.bucket is not a known key: did you mean options.buckets?'],
    ['groupByPartitionKey', () => p.groupByPartitionKey([], {datasetfield: 'x'}), 'did you mean options.datasetField?'],
    ['partitionKeyOf', () => p.partitionKeyOf({datasetName: 'd'}, {bucketFeild: 'b'}), 'did you mean options.bucketField?'],
    ['validatePartitionConfig', () => p.validatePartitionConfig({type: 'date', date_format: '2006'}), 'config.date_format is not a known key: did you mean config.dateFormat?'],
    ['ObjectPartitioner source', () => new p.ObjectPartitioner(2, {partiton: {type: 'object'}}), 'source.partiton is not a known key: did you mean source.partition?'],
    ['ObjectPartitioner partition', () => new p.ObjectPartitioner(2, {partition: {type: 'regex', patern: 'x'}}), 'source.partition.patern is not a known key: did you mean source.partition.pattern?'],
    ['Bucketing.create', () => p.Bucketing.create({partitionKey: 'k', config: {bucket_total: 1}, loger: () => {}}), 'options.loger is not a known key: did you mean options.logger?'],
    ['bucketingSpecProperties', () => p.bucketingSpecProperties({ordr: 1}), 'did you mean options.order?'],
    ['SyncTask', () => new p.SyncTask('t', {publishas: 'records'}), 'did you mean options.publishAs?'],
  ];
  test.each(cases)('%s', (_, fn, message) => {
    const e = thrown(fn);
    expect(e).toBeInstanceOf(p.PartkitError);
    expect(e.message).toContain(message);
    expect(e.message).toMatch(/\(known keys: /);
  });
});

describe("Go's almost-sure mistakes: a warning, the result unchanged", () => {
  test('a date layout with no Go layout element', () => {
    const keys = ['2024-01-05/a', '2024-01-06/b', '2024-01-07/c'];
    const bad = new p.ObjectPartitioner(3, {partition: {type: 'date', dateFormat: 'YYYY-MM-DD'}});
    const s = bad.stats(keys);
    expect(s.counts).toEqual([3, 0, 0]);
    expect(s.fallback).toBe(3);
    expect(s.warnings).toHaveLength(1);
    expect(s.warnings[0]).toContain('dateFormat "YYYY-MM-DD" has no Go layout element');
    expect(bad.warnings).toEqual(s.warnings);
    const good = new p.ObjectPartitioner(3, {partition: {type: 'date', dateFormat: '2006-01-02'}});
    expect(good.warnings).toEqual([]);
    expect(good.stats(keys)).not.toHaveProperty('warnings');
  });
});
