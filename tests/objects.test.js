// Object-key partitioning: the reference page's Go vectors, a differential test against an
// independent JS implementation, fast-check properties, and robustness against any input.
const fc = require('fast-check');
const partkit = require('partkit');
const {thrown} = require('./support/thrown');

const {
  partitionObjects, ObjectPartitioner, validatePartitionConfig, sanitizeKeyForPatternMatching,
  listingPrefix, fnv1a32, PartitionError, PartkitError, DIRECTORY, ALL_PARTITIONS,
} = partkit;

/** FNV-1a 32 over UTF-8, written independently (Buffer encodes lone surrogates as U+FFFD). */
function refFnv(text) {
  const bytes = Buffer.from(text, 'utf8');
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

/** Go's partitioner for the types JS can express exactly (object, substring, none). */
function refIndex(key, total, source) {
  if (key.endsWith('/')) return DIRECTORY;
  const type = source.partition?.type ?? '';
  if (total === 1 || type === '' || type === 'none') return ALL_PARTITIONS;
  const prefix = (source.key ?? '').trim().replace(/\*$/, '');
  let k = key.startsWith(prefix) ? key.slice(prefix.length) : key;
  if (k.startsWith('/')) k = k.slice(1);
  if (type === 'object') return refFnv(key) % total;
  if (type === 'substring') {
    const cps = Array.from(k); // code points
    const {startIndex, endIndex} = source.partition;
    if (cps.length < endIndex) return 0;
    return refFnv(cps.slice(startIndex, endIndex).join('')) % total;
  }
  throw new Error(`no reference for ${type}`);
}

/** All partitions via partitionObjects, sorted inside each. */
function partitions(keys, total, source) {
  return Array.from({length: total}, (_, i) => partitionObjects(keys, total, i, source).slice().sort());
}

const sorted = (parts) => parts.map((p) => p.slice().sort());

describe('reference vectors (Go test suite)', () => {
  test('object, two partitions, directory dropped', () => {
    const keys = ['file1.txt', 'file2.txt', 'dir/', 'file3.txt', 'file4.txt'];
    const source = {partition: {type: 'object'}};
    expect(partitions(keys, 2, source)).toEqual(sorted([['file1.txt', 'file3.txt'], ['file2.txt', 'file4.txt']]));
    expect(new ObjectPartitioner(2, source).plan(keys)).toEqual([['file1.txt', 'file3.txt'], ['file2.txt', 'file4.txt']]);
  });

  test('object, five partitions', () => {
    const keys = ['file1.txt', 'file2.txt', 'file3.txt'];
    expect(partitions(keys, 5, {partition: {type: 'object'}}))
      .toEqual([[], ['file1.txt'], [], ['file2.txt'], ['file3.txt']]);
  });

  test('object, non-ASCII keys under a prefix', () => {
    const keys = ['prefix/文件1.txt', 'prefix/文件2.txt', 'prefix/文件dir/'];
    expect(partitions(keys, 2, {key: 'prefix/', partition: {type: 'object'}}))
      .toEqual([['prefix/文件2.txt'], ['prefix/文件1.txt']]);
  });

  test('regex with one capture group', () => {
    const raw = ['user123/file1.txt', 'user123/file2.txt', 'user123/another.txt', 'user456/file3.txt',
      'user789/file4.txt', 'invalid/file5.txt', 'userdir/'];
    const keys = raw.map((k) => `prefix/${k}`);
    const p = (k) => `prefix/${k}`;
    expect(partitions(keys, 4, {key: 'prefix/', partition: {type: 'regex', pattern: 'user(\\d+)'}})).toEqual(sorted([
      [p('user456/file3.txt'), p('invalid/file5.txt')],
      [p('user789/file4.txt')],
      [],
      [p('user123/file1.txt'), p('user123/file2.txt'), p('user123/another.txt')],
    ]));
  });

  test('regex with two capture groups', () => {
    const keys = ['user123-group456.txt', 'user789-group012.txt', 'user123-group999.txt', 'user123-group999.log', 'invalid.txt'];
    expect(partitions(keys, 3, {partition: {type: 'regex', pattern: 'user(\\d+)-group(\\d+)'}})).toEqual(sorted([
      ['invalid.txt'],
      ['user123-group999.txt', 'user123-group999.log'],
      ['user123-group456.txt', 'user789-group012.txt'],
    ]));
  });

  test('regex without groups, and with empty groups', () => {
    expect(partitions(['001.txt', '002.txt', '003.txt', 'abc.txt'], 3, {partition: {type: 'regex', pattern: '00\\d'}}))
      .toEqual(sorted([['abc.txt', '001.txt', '002.txt'], ['003.txt'], []]));
    expect(partitions(['data1.txt', 'data2.txt'], 2, {partition: {type: 'regex', pattern: '()'}}))
      .toEqual([['data1.txt', 'data2.txt'], []]);
  });

  test('date', () => {
    const raw = ['2023-01-01-data.txt', '2023-01-02-data.txt', '2023-01-02-another.txt', '2023-01-02-more.txt',
      '2023-01-03-data.txt', 'invalid-date.txt', 'dates/'];
    const keys = raw.map((k) => `prefix/${k}`);
    const p = (k) => `prefix/${k}`;
    const source = {key: 'prefix/', partition: {type: 'date', dateFormat: '2006-01-02'}};
    expect(partitions(keys, 2, source)).toEqual(sorted([
      [p('2023-01-01-data.txt'), p('2023-01-03-data.txt'), p('invalid-date.txt')],
      [p('2023-01-02-data.txt'), p('2023-01-02-another.txt'), p('2023-01-02-more.txt')],
    ]));
    const s = new ObjectPartitioner(2, source).stats(keys);
    expect(s).toEqual({counts: [3, 3], fallback: 1, directories: 1});
  });

  test('invalid totals and indices', () => {
    for (const total of [-1, 0]) {
      const e = thrown(() => partitionObjects(['a'], total, 0, {partition: {type: 'object'}}));
      expect(e).toBeInstanceOf(PartitionError);
      expect(e).toBeInstanceOf(PartkitError);
      expect(e.message).toBe('job partitions/count must be greater than 0');
      expect(e.code).toBe('PARTITION_COUNT_INVALID');
    }
    for (const index of [-1, 2, 3]) {
      const e = thrown(() => partitionObjects(['a'], 2, index, {partition: {type: 'object'}}));
      expect(e.message).toBe('partition index must be between 0 and 1');
      expect(e.code).toBe('PARTITION_INDEX_OUT_OF_RANGE');
      expect(thrown(() => new ObjectPartitioner(2, {}).select(['a'], index)).code).toBe('PARTITION_INDEX_OUT_OF_RANGE');
    }
    expect(thrown(() => new ObjectPartitioner(0, {})).message).toBe('job partitions/count must be greater than 0');
  });

  test('hash values', () => {
    expect(fnv1a32('')).toBe(2166136261);
    expect(fnv1a32('a')).toBe(3826002220);
    expect(fnv1a32('hello')).toBe(1335831723);
    expect(fnv1a32('prefix/文件1.txt')).toBe(2459005073);
    expect(fnv1a32('🦄🌈')).toBe(2868248295);
  });
});

describe('validation (Go messages)', () => {
  test.each([
    [{type: 'Object'}, 'unsupported partition key type Object'],
    [{type: 'regex'}, 'regex pattern cannot be empty'],
    [{type: 'regex', pattern: 'a(b'}, 'invalid regex pattern: error parsing regexp: missing closing ): `a(b`'],
    [{type: 'regex', pattern: '(?x)a'}, 'invalid regex pattern: error parsing regexp: invalid or unsupported Perl syntax: `(?x`'],
    [{type: 'regex', pattern: 'a{1001}'}, 'invalid regex pattern: error parsing regexp: invalid repeat count: `{1001}`'],
    [{type: 'substring', startIndex: -1, endIndex: 3}, 'start index cannot be negative'],
    [{type: 'substring'}, 'end index must be greater than start index'],
    [{type: 'date'}, 'date format cannot be empty'],
    [{type: 'date', dateFormat: '12006'}, 'invalid date format: 12006'],
  ])('%j', (config, message) => {
    const e = thrown(() => validatePartitionConfig(config));
    expect(e).toBeInstanceOf(PartitionError);
    expect(e.message).toBe(message);
    expect(e.code).toBe('PARTITION_CONFIG_INVALID');
    // The config is validated first, even with one partition.
    expect(thrown(() => partitionObjects([], 1, 0, {partition: config})).message).toBe(message);
    expect(thrown(() => new ObjectPartitioner(1, {partition: config})).message).toBe(message);
  });

  test('valid configs, null fields are zero values', () => {
    for (const c of [{}, {type: ''}, {type: 'none'}, {type: 'object'}, {type: 'regex', pattern: '.'},
      {type: 'substring', startIndex: 0, endIndex: 1}, {type: 'date', dateFormat: 'no tokens'},
      {type: null, pattern: null, startIndex: null, endIndex: null, dateFormat: null}]) {
      expect(() => validatePartitionConfig(c)).not.toThrow();
    }
  });

  test('wrong types are INVALID_ARGUMENT', () => {
    for (const [c, msg] of [
      [{type: 1}, 'config.type must be a string, got the number 1'],
      [{type: 'substring', startIndex: 1.5, endIndex: 3}, 'config.startIndex must be an integer, got the number 1.5'],
      [{type: 'substring', startIndex: 0, endIndex: '3'}, 'config.endIndex must be an integer, got the string "3"'],
      [{type: 'date', dateFormat: ['2006']}, 'config.dateFormat must be a string, got an array'],
    ]) {
      const e = thrown(() => validatePartitionConfig(c));
      expect(e).toBeInstanceOf(PartitionError);
      expect(e.code).toBe('INVALID_ARGUMENT');
      expect(e.message).toBe(msg);
    }
    expect(thrown(() => validatePartitionConfig(null)).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => partitionObjects('abc', 1, 0, {})).message).toBe('objects must be an array, got the string "abc"');
    expect(thrown(() => partitionObjects([{key: 3}], 1, 0, {})).message).toBe('objects[0].key must be a string, got the number 3');
    expect(thrown(() => partitionObjects([{key: 'a', isDir: 'no'}], 1, 0, {})).message)
      .toBe('objects[0].isDir must be a boolean, got the string "no"');
    expect(thrown(() => partitionObjects([7], 1, 0, {})).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => partitionObjects([], 1.5, 0, {})).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => partitionObjects([], 2, NaN, {})).code).toBe('INVALID_ARGUMENT');
    expect(thrown(() => partitionObjects([], 2, 0, null)).code).toBe('INVALID_ARGUMENT');
  });

  test('huge totals: Go truncates to uint32; ObjectPartitioner is bounded', () => {
    const e = thrown(() => partitionObjects(['file1.txt'], 2 ** 32, 0, {partition: {type: 'object'}}));
    expect(e.code).toBe('PARTITION_COUNT_UNSUPPORTED');
    // uint32(2^32 + 5) = 5.
    const i = fnv1a32('file1.txt') % 5;
    expect(partitionObjects(['file1.txt'], 2 ** 32 + 5, i, {partition: {type: 'object'}})).toEqual(['file1.txt']);
    expect(thrown(() => new ObjectPartitioner(2 ** 31, {})).code).toBe('PARTITION_COUNT_UNSUPPORTED');
    expect(thrown(() => new ObjectPartitioner(2 ** 24 + 1, {}).plan([])).code).toBe('INVALID_ARGUMENT');
  });
});

describe('keys, prefixes and directories', () => {
  test('prefix trimming (Go: one leading slash, Unicode TrimSpace, one trailing *)', () => {
    expect(listingPrefix('data/users/*')).toBe('data/users/');
    expect(listingPrefix('\u0085 logs/** \u00a0')).toBe('logs/*');
    expect(listingPrefix('\ufeffx/')).toBe('\ufeffx/');
    expect(sanitizeKeyForPatternMatching('data/users/2024/file.csv', 'data/users/')).toBe('2024/file.csv');
    expect(sanitizeKeyForPatternMatching('data/users//extra/file.csv', 'data/users/')).toBe('extra/file.csv');
    expect(sanitizeKeyForPatternMatching('data/users///extra/file.csv', 'data/users/')).toBe('/extra/file.csv');
    expect(sanitizeKeyForPatternMatching('other/data/users/file.csv', 'data/users/')).toBe('other/data/users/file.csv');
    expect(sanitizeKeyForPatternMatching('/root/file.bin', '')).toBe('root/file.bin');
    expect(new ObjectPartitioner(2, {key: ' data/* '}).prefix).toBe('data/');
  });

  test('objects: isDir decides, same references, input order', () => {
    const objs = [{key: 'a/', isDir: false}, {key: 'b', isDir: true}, {key: 'c/'}, {key: 'd', size: 3}, 'e', 'f/'];
    const got = partitionObjects(objs, 1, 0, {});
    expect(got).toEqual([objs[0], objs[3], objs[4]]);
    expect(got[0]).toBe(objs[0]);
    const p = new ObjectPartitioner(3, {partition: {type: 'object'}});
    const all = [0, 1, 2].flatMap((i) => p.select(objs, i));
    expect(all.sort((x, y) => objs.indexOf(x) - objs.indexOf(y))).toEqual([objs[0], objs[3], objs[4]]);
  });

  test('none and one partition: every partition gets every file', () => {
    const keys = ['a', 'b/', 'c'];
    for (const [total, source] of [[3, {}], [3, {partition: {type: 'none'}}], [1, {partition: {type: 'object'}}]]) {
      const p = new ObjectPartitioner(total, source);
      expect(p.isPartitioned).toBe(false);
      expect(p.indexOf('a')).toBe(ALL_PARTITIONS);
      expect(p.indexOf('b/')).toBe(DIRECTORY);
      expect(p.plan(keys)).toEqual(Array.from({length: total}, () => ['a', 'c']));
      expect(p.stats(keys)).toEqual({counts: new Array(total).fill(2), fallback: 0, directories: 1});
      for (let i = 0; i < total; i++) expect(partitionObjects(keys, total, i, source)).toEqual(['a', 'c']);
    }
  });

  test('regex is Go syntax, not JS syntax', () => {
    const p = (pattern) => new ObjectPartitioner(1 << 20, {partition: {type: 'regex', pattern}});
    const h = (s) => fnv1a32(s) % (1 << 20);
    expect(p('\\d+').indexOf('x٤٢')).toBe(0); // Go's \d is ASCII: fallback
    expect(p('\\<(\\w+)\\>').indexOf('a<tag>b')).toBe(h('tag')); // \< is a literal
    expect(p('\\Q.*\\E').indexOf('x.*y')).toBe(h('.*'));
    expect(p('(?i)k').indexOf('\u212a')).toBe(h('\u212a'));
    expect(p('(a|ab)').indexOf('ab')).toBe(h('a')); // leftmost-first
    expect(thrown(() => p('(?=a)')).message).toBe(
      'invalid regex pattern: error parsing regexp: invalid or unsupported Perl syntax: `(?=`');
  });

  test('substring counts code points, date prefix counts bytes', () => {
    const sub = new ObjectPartitioner(97, {partition: {type: 'substring', startIndex: 1, endIndex: 3}});
    expect(sub.indexOf('a文件b')).toBe(fnv1a32('文件') % 97);
    expect(sub.indexOf('🦄🌈')).toBe(0);
    const date = new ObjectPartitioner(97, {partition: {type: 'date', dateFormat: '2006-01-02T1'}});
    expect(date.indexOf('2024-01-15T0rest')).toBe(0); // month token "1" sees "0": out of range
    expect(date.indexOf('2024-01-15T1rest')).toBe(fnv1a32('2024-01-15T1') % 97);
    const re = new ObjectPartitioner(1000, {partition: {type: 'date', dateFormat: 'Jan _2 2006'}});
    expect(re.indexOf('FEB  5 2024.log')).toBe(fnv1a32('Feb  5 2024') % 1000); // re-formatted date
    expect(re.stats(['feb 30 2024', 'x', 'Feb 29 2024', 'd/'])).toEqual(
      {counts: re.stats(['feb 30 2024', 'x', 'Feb 29 2024']).counts, fallback: 2, directories: 1});
  });

  test('lone surrogates are U+FFFD, as they reach Go from a UTF-8 listing', () => {
    const p = new ObjectPartitioner(101, {partition: {type: 'object'}});
    expect(p.indexOf('a\uD800b')).toBe(p.indexOf('a\uFFFDb'));
    expect(Array.from(p.indexMany(['a\uD800', '\uDC00b', 'a\uD800\uDC00b']))).toEqual(
      [p.indexOf('a\uFFFD'), p.indexOf('\uFFFDb'), p.indexOf('a\u{10000}b')]);
    expect(fnv1a32('\uD800')).toBe(refFnv('\uFFFD'));
  });

  test('keys cross as UTF-16 code units: the same with and without Node\'s Buffer', () => {
    // Surrogate pairs split between keys, lone halves at chunk and group edges, long keys.
    const pieces = ['a', '\uD83E', '\uDD84', '\uD83E\uDD84', 'é', '日', '/', '', 'x'.repeat(70000), '2024-01-02'];
    const keys = Array.from({length: 4000}, (_, i) => pieces[i % pieces.length] + pieces[(i * 7) % pieces.length]);
    const sources = [{partition: {type: 'object'}}, {partition: {type: 'substring', startIndex: 0, endIndex: 2}},
      {partition: {type: 'regex', pattern: '(.)$'}}, {partition: {type: 'date', dateFormat: '2006-01-02'}}];
    for (const source of sources) {
      const p = new ObjectPartitioner(13, source);
      const want = keys.map((k) => p.indexOf(k));
      const withBuffer = Array.from(p.indexMany(keys));
      const saved = globalThis.Buffer;
      let without;
      try {
        globalThis.Buffer = undefined;
        without = Array.from(p.indexMany(keys));
      } finally {
        globalThis.Buffer = saved;
      }
      expect(withBuffer).toEqual(want);
      expect(without).toEqual(want);
    }
  });

  test('large batches cross in chunks with their directory flags', () => {
    // More than 2^24 UTF-16 units in all: mapPacked splits the batch.
    const n = 9000;
    const keys = Array.from({length: n}, (_, i) => `${'x'.repeat(2000)}/${i}${i % 7 === 0 ? '/' : ''}`);
    const objs = keys.map((key, i) => (i % 3 === 0 ? {key, isDir: i % 2 === 0} : key));
    const p = new ObjectPartitioner(5, {partition: {type: 'object'}});
    const idx = p.indexMany(keys);
    expect(idx.length).toBe(n);
    const plan = p.plan(objs);
    const want = Array.from({length: 5}, () => []);
    const wantIdx = [];
    objs.forEach((o, i) => {
      const dir = typeof o === 'string' ? o.endsWith('/') : o.isDir;
      if (!dir) want[refFnv(keys[i]) % 5].push(o);
      wantIdx.push(keys[i].endsWith('/') ? DIRECTORY : refFnv(keys[i]) % 5);
    });
    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
    expect(same(Array.from(idx), wantIdx)).toBe(true);
    expect(plan.every((part, i) => same(part, want[i]))).toBe(true);
  });
});

describe('properties', () => {
  const key = fc.oneof(
    fc.string({maxLength: 30}),
    fc.string({unit: fc.constantFrom('a', 'b', '/', '0', '1', '-', 'é', '日', '🦄', '\uD800', '\uDC00', ' ', '*'), maxLength: 16}),
    fc.constantFrom('pre/user12/a.txt', 'pre/2023-01-02-x', 'pre//x', 'dir/', '2024-02-29.log'),
  );
  const config = fc.oneof(
    fc.constant({}),
    fc.constant({type: 'none'}),
    fc.constant({type: 'object'}),
    fc.constantFrom('user(\\d+)', '(\\d{4})-(\\d{2})', '([a-z]*)(x)?', '.', '\\pL+', '^/?(.)').map((pattern) => ({type: 'regex', pattern})),
    fc.tuple(fc.nat(6), fc.integer({min: 1, max: 8})).map(([s, l]) => ({type: 'substring', startIndex: s, endIndex: s + l})),
    fc.constantFrom('2006-01-02', '20060102', 'Jan _2', '2006-002').map((dateFormat) => ({type: 'date', dateFormat})),
  );
  const prefix = fc.constantFrom('', 'pre/', ' pre/* ', 'pre');

  test('every file in exactly one partition; plan = select = indexMany; deterministic', () => {
    fc.assert(fc.property(fc.array(key, {maxLength: 30}), config, fc.integer({min: 1, max: 6}), prefix, (keys, partition, total, k) => {
      const source = {key: k, partition};
      const p = new ObjectPartitioner(total, source);
      const idx = p.indexMany(keys);
      const plan = p.plan(keys);
      expect(plan.length).toBe(total);
      for (let i = 0; i < total; i++) {
        expect(p.select(keys, i)).toEqual(plan[i]);
        expect(partitionObjects(keys, total, i, source)).toEqual(plan[i]);
      }
      keys.forEach((key, j) => {
        expect(idx[j]).toBe(p.indexOf(key));
        const n = plan.filter((part) => part.includes(key)).length;
        if (key.endsWith('/')) expect(idx[j]).toBe(DIRECTORY);
        else if (p.isPartitioned) expect(plan[idx[j]]).toContain(key);
        if (key.endsWith('/') && !keys.some((o) => o === key && !o.endsWith('/'))) expect(n).toBe(0);
      });
      const s = p.stats(keys);
      expect(s.counts).toEqual(plan.map((part) => part.length));
      expect(s.directories).toBe(keys.filter((x) => x.endsWith('/')).length);
      expect(Array.from(new ObjectPartitioner(total, source).indexMany(keys))).toEqual(Array.from(idx));
    }), {numRuns: 300});
  });

  test('object and substring agree with an independent implementation', () => {
    const cfg = fc.oneof(
      fc.constant({type: 'object'}),
      fc.tuple(fc.nat(5), fc.integer({min: 1, max: 6})).map(([s, l]) => ({type: 'substring', startIndex: s, endIndex: s + l})),
    );
    fc.assert(fc.property(fc.array(key, {maxLength: 20}), cfg, fc.integer({min: 1, max: 9}), prefix, (keys, partition, total, k) => {
      const source = {key: k, partition};
      const idx = new ObjectPartitioner(total, source).indexMany(keys);
      keys.forEach((key, j) => {
        const clean = key.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
        expect(idx[j]).toBe(refIndex(clean, total, source));
      });
    }), {numRuns: 300});
  });

  test('fnv1a32 matches the reference on any string', () => {
    fc.assert(fc.property(fc.string({unit: 'binary', maxLength: 40}), (s) => {
      expect(fnv1a32(s)).toBe(refFnv(s));
    }), {numRuns: 500});
  });
});

describe('bad input of any shape', () => {
  const calls = [
    (a, b, c, d) => partitionObjects(a, b, c, d),
    (a, b) => new ObjectPartitioner(a, b),
    (a) => new ObjectPartitioner(3, {partition: {type: 'object'}}).indexOf(a),
    (a) => new ObjectPartitioner(3, {partition: {type: 'regex', pattern: 'a(b)'}}).indexMany(a),
    (a, b) => new ObjectPartitioner(3, {partition: {type: 'date', dateFormat: '2006'}}).select(a, b),
    (a) => new ObjectPartitioner(3, {}).plan(a),
    (a) => new ObjectPartitioner(3, {partition: {type: 'substring', startIndex: 1, endIndex: 2}}).stats(a),
    (a) => validatePartitionConfig(a),
    (a) => validatePartitionConfig({type: 'regex', pattern: a}),
    (a) => validatePartitionConfig({type: 'date', dateFormat: a}),
    (a, b) => validatePartitionConfig({type: 'substring', startIndex: a, endIndex: b}),
    (a, b) => sanitizeKeyForPatternMatching(a, b),
    (a) => listingPrefix(a),
    (a) => fnv1a32(a),
  ];

  test('throws PartkitError or returns; the module keeps working', () => {
    const anything = fc.oneof(
      fc.anything(),
      fc.string({unit: 'binary'}),
      fc.constantFrom(NaN, Infinity, -0, 2 ** 53, -(2 ** 60), 1e300, 0.5, 10n, Symbol('s'), () => 1, new Date(0), [], [[]], {key: 1}),
      fc.array(fc.oneof(fc.string(), fc.record({key: fc.anything(), isDir: fc.anything()}), fc.anything()), {maxLength: 5}),
      fc.record({key: fc.anything(), partition: fc.record({type: fc.constantFrom('object', 'regex', 'date', 'substring', 'x'), pattern: fc.anything(), startIndex: fc.anything(), endIndex: fc.anything(), dateFormat: fc.anything()})}),
    );
    fc.assert(fc.property(fc.nat(calls.length - 1), anything, anything, anything, anything, (which, a, b, c, d) => {
      try {
        calls[which](a, b, c, d);
      } catch (error) {
        if (!(error instanceof PartkitError)) throw error;
        expect(typeof error.code).toBe('string');
      }
    }), {numRuns: 2000});
    expect(partitionObjects(['file1.txt', 'file2.txt', 'dir/', 'file3.txt', 'file4.txt'], 2, 1, {partition: {type: 'object'}}))
      .toEqual(['file2.txt', 'file4.txt']);
    expect(fnv1a32('hello')).toBe(1335831723);
  });

  test('hostile patterns and layouts never break the module', () => {
    const hostile = ['('.repeat(5000), '(?:'.repeat(300) + ')*'.repeat(300), 'a{1000}'.repeat(5000), '\\pL'.repeat(30000),
      '[' + 'a-'.repeat(1000), '\\x{' + 'f'.repeat(100) + '}', '((a{10}){10}){10}', 'x'.repeat(100000)];
    for (const pattern of hostile) {
      try {
        new ObjectPartitioner(4, {partition: {type: 'regex', pattern}}).indexMany(['a', 'b']);
      } catch (error) {
        expect(error).toBeInstanceOf(PartitionError);
      }
    }
    for (const dateFormat of ['.'.repeat(10000) + '0'.repeat(5000), '2006'.repeat(10000), 'Z07:00:00'.repeat(100), '\uD800']) {
      try {
        new ObjectPartitioner(4, {partition: {type: 'date', dateFormat}}).indexMany(['2006', 'x'.repeat(50000)]);
      } catch (error) {
        expect(error).toBeInstanceOf(PartitionError);
      }
    }
    // 240 levels (partkit's limit is 250, Go's 1000) compile and match within the wasm stack.
    const deep = (pattern) => new ObjectPartitioner(1 << 20, {partition: {type: 'regex', pattern}});
    expect(deep('('.repeat(240) + 'a' + ')'.repeat(240)).indexOf('xa'))
      .toBe(refFnv(new Array(240).fill('a').join('\x1F')) % (1 << 20)); // 240 groups "a", joined
    expect(deep('(?:'.repeat(240) + 'a' + ')*'.repeat(240)).indexOf('xa')).toBe(0); // empty match at 0
    expect(deep('x' + '(?:'.repeat(240) + 'a' + ')*'.repeat(240)).indexOf('xa')).toBe(refFnv('xa') % (1 << 20));
    expect(thrown(() => new ObjectPartitioner(2, {partition: {type: 'regex', pattern: '('.repeat(251) + ')'.repeat(251)}})).message)
      .toMatch(/expression nests too deeply/);
    expect(fnv1a32('hello')).toBe(1335831723);
  });
});

describe('partkit objects (CLI)', () => {
  const {execFileSync} = require('child_process');
  const path = require('path');
  const cli = path.join(__dirname, '..', 'js', 'cli.mjs');
  const run = (args, input) => execFileSync(process.execPath, [cli, ...args], {input, encoding: 'utf8'});
  const listing = 'user123/file1.txt\nuser456/file3.txt\ninvalid/file5.txt\nuserdir/\n';

  test('prints the keys of one partition', () => {
    const args = ['objects', '--total', '4', '--type', 'regex', '--pattern', 'user(\\d+)'];
    expect(run([...args, '--index', '0'], listing)).toBe('user456/file3.txt\ninvalid/file5.txt\n');
    expect(run([...args, '--index', '3', '-'], listing)).toBe('user123/file1.txt\n');
  });

  test('--plan prints counts and fallbacks', () => {
    const out = run(['objects', '--total', '4', '--type', 'regex', '--pattern', 'user(\\d+)', '--plan'], listing);
    expect(out).toBe('partition 0\t2\npartition 1\t0\npartition 2\t0\npartition 3\t1\n' +
      'keys 4, directories 1, fallback to partition 0: 1\n');
  });

  test('errors carry Go messages and exit 1', () => {
    const e = thrown(() => execFileSync(process.execPath,
      [cli, 'objects', '--total', '2', '--index', '0', '--type', 'date', '--date-format', '12006'],
      {input: 'x\n', encoding: 'utf8', stdio: 'pipe'}));
    expect(e.status).toBe(1);
    expect(e.stderr).toContain('[PARTITION_CONFIG_INVALID] invalid date format: 12006');
  });

  test('demo runs', () => {
    const out = execFileSync(process.execPath, [cli, 'demo'], {encoding: 'utf8'});
    expect(out).toContain('== Object partitioning');
    expect(out).toContain('invalid or unsupported Perl syntax: `(?=`');
  });
});
