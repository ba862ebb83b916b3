// Raw DEFLATE (RFC 1951) decoding, synchronous, for the wasm that js/wasm/load.mjs compiles:
// the build deflates each domain's wasm before writing it as base64, which then weighs what the
// wasm gzipped weighs, on the registry and over the network, gzipped again or not. Written for
// size (it is downloaded with every browser page): one bit reader, table-driven decoding.

/** Base values and extra bits of the 29 length codes (257-285) and the 30 distance codes. */
const LEN_EXTRA = [];
const LEN_BASE = [];
const DIST_EXTRA = [];
const DIST_BASE = [];
for (let i = 0, len = 3, dist = 1; i < 30; i++) {
  LEN_EXTRA[i] = i < 8 || i > 27 ? 0 : (i >> 2) - 1;
  LEN_BASE[i] = i === 28 ? 258 : len;
  len += 1 << LEN_EXTRA[i];
  DIST_EXTRA[i] = i < 4 ? 0 : (i >> 1) - 1;
  DIST_BASE[i] = dist;
  dist += 1 << DIST_EXTRA[i];
}
const CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/**
 * The lookup table of the canonical Huffman code of `lengths`: entry `i` of `1 << max` is
 * `symbol << 4 | length` of the code that the low `length` bits of `i` (read LSB first) spell.
 */
function table(lengths) {
  const max = Math.max(1, ...lengths);
  const next = new Uint16Array(17);
  for (const l of lengths) if (l) next[l + 1]++;
  for (let len = 1; len < 16; len++) next[len + 1] = (next[len] + next[len + 1]) << 1;
  const t = new Uint32Array(1 << max);
  lengths.forEach((len, sym) => {
    if (!len) return;
    let rev = 0;
    for (let i = 0, code = next[len]++; i < len; i++, code >>= 1) rev = (rev << 1) | (code & 1);
    for (let i = rev; i < t.length; i += 1 << len) t[i] = (sym << 4) | len;
  });
  return {t, mask: t.length - 1, max};
}

const malformed = () => new Error('partkit: malformed wasm data');

/** The bytes `input` (raw DEFLATE) decodes to, `size` of them. Throws on malformed input. */
export function inflate(input, size) {
  const out = new Uint8Array(size);
  const n = input.length;
  let o = 0;
  let pos = 0;
  let buf = 0;
  let cnt = 0;
  // Past the end of the input, zero bits (a table lookup may look ahead); reading them is an error.
  const need = (k) => {
    for (; cnt < k; cnt += 8) buf |= (input[pos++] ?? 0) << cnt;
  };
  const bits = (k) => {
    need(k);
    const v = buf & ((1 << k) - 1);
    buf >>>= k;
    cnt -= k;
    return v;
  };
  const decode = ({t, mask, max}) => {
    need(max);
    const e = t[buf & mask];
    const len = e & 15;
    if (!len) throw malformed();
    buf >>>= len;
    cnt -= len;
    return e >>> 4;
  };
  for (let last = 0; !last; ) {
    last = bits(1);
    const type = bits(2);
    let lit;
    let dist;
    if (type === 0) {
      // stored: drop to the byte boundary (whole bytes still buffered are given back)
      pos -= cnt >> 3;
      buf = cnt = 0;
      const len = input[pos] | (input[pos + 1] << 8);
      pos += 4;
      if (pos + len > n || o + len > size) throw malformed();
      out.set(input.subarray(pos, (pos += len)), o);
      o += len;
      continue;
    } else if (type === 1) {
      const lengths = new Uint8Array(318).fill(8, 0, 144).fill(9, 144, 256).fill(7, 256, 280).fill(8, 280, 288).fill(5, 288);
      lit = table(lengths.subarray(0, 288));
      dist = table(lengths.subarray(288));
    } else if (type === 2) {
      const hlit = bits(5) + 257;
      const hdist = bits(5) + 1;
      const hclen = bits(4) + 4;
      const cl = new Uint8Array(19);
      for (let i = 0; i < hclen; i++) cl[CL_ORDER[i]] = bits(3);
      const clCode = table(cl);
      const lengths = new Uint8Array(hlit + hdist);
      for (let i = 0; i < lengths.length; ) {
        const sym = decode(clCode);
        if (sym < 16) lengths[i++] = sym;
        else {
          if (sym === 16 && !i) throw malformed();
          const rep = sym === 16 ? 3 + bits(2) : sym === 17 ? 3 + bits(3) : 11 + bits(7);
          if (i + rep > lengths.length) throw malformed();
          lengths.fill(sym === 16 ? lengths[i - 1] : 0, i, (i += rep));
        }
      }
      lit = table(lengths.subarray(0, hlit));
      dist = table(lengths.subarray(hlit));
    } else throw malformed();
    for (;;) {
      const sym = decode(lit);
      if (sym < 256) {
        if (o >= size) throw malformed();
        out[o++] = sym;
        continue;
      }
      if (sym === 256) break;
      const l = sym - 257;
      if (l > 28) throw malformed();
      const length = LEN_BASE[l] + bits(LEN_EXTRA[l]);
      const d = decode(dist);
      if (d > 29) throw malformed();
      const back = DIST_BASE[d] + bits(DIST_EXTRA[d]);
      if (back > o || o + length > size) throw malformed();
      if (back >= length) out.copyWithin(o, o - back, o - back + length);
      else for (let i = 0; i < length; i++) out[o + i] = out[o + i - back];
      o += length;
    }
  }
  if (o !== size || pos - (cnt >> 3) > n) throw malformed();
  return out;
}
