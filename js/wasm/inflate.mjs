// Raw DEFLATE (RFC 1951) decoding, synchronous, for the wasm that js/wasm/load.mjs compiles:
// the build deflates each domain's wasm before writing it as base64, which then weighs what the
// wasm gzipped weighs, on the registry and over the network, gzipped again or not.

const LEN_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LEN_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
  4097, 6145, 8193, 12289, 16385, 24577];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
const CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/**
 * The lookup table of the canonical Huffman code of `lengths`: entry `i` of `1 << max` is
 * `symbol << 4 | length` of the code that the low `length` bits of `i` (read LSB first) spell.
 */
function table(lengths) {
  let max = 1;
  for (const l of lengths) if (l > max) max = l;
  const counts = new Uint16Array(16);
  for (const l of lengths) counts[l]++;
  counts[0] = 0;
  const next = new Uint16Array(16);
  for (let len = 1, code = 0; len < 16; len++) {
    code = (code + counts[len - 1]) << 1;
    next[len] = code;
  }
  const size = 1 << max;
  const t = new Uint32Array(size);
  for (let sym = 0; sym < lengths.length; sym++) {
    const len = lengths[sym];
    if (!len) continue;
    let code = next[len]++;
    let rev = 0;
    for (let i = 0; i < len; i++, code >>= 1) rev = (rev << 1) | (code & 1);
    for (let i = rev; i < size; i += 1 << len) t[i] = (sym << 4) | len;
  }
  return {t, mask: size - 1, max};
}

let FIXED = null;
function fixedCodes() {
  if (FIXED) return FIXED;
  const lit = new Uint8Array(288);
  lit.fill(8, 0, 144);
  lit.fill(9, 144, 256);
  lit.fill(7, 256, 280);
  lit.fill(8, 280, 288);
  FIXED = [table(lit), table(new Uint8Array(30).fill(5))];
  return FIXED;
}

const malformed = () => new Error('partkit: malformed wasm data');

/** The bytes `input` (raw DEFLATE) decodes to, `size` of them. Throws on malformed input. */
export function inflate(input, size) {
  const out = new Uint8Array(size);
  const n = input.length;
  let o = 0;
  let pos = 0;
  let bitBuf = 0;
  let bitCnt = 0;
  // Past the end of the input, zero bits (a table lookup may look ahead); reading them is an error.
  const fill = (need) => {
    while (bitCnt < need) {
      bitBuf |= (pos < n ? input[pos] : 0) << bitCnt;
      pos++;
      bitCnt += 8;
    }
  };
  const bits = (k) => {
    if (k === 0) return 0;
    fill(k);
    const v = bitBuf & ((1 << k) - 1);
    bitBuf >>>= k;
    bitCnt -= k;
    return v;
  };
  const decode = ({t, mask, max}) => {
    fill(max);
    const e = t[bitBuf & mask];
    const len = e & 15;
    if (len === 0) throw malformed();
    bitBuf >>>= len;
    bitCnt -= len;
    return e >>> 4;
  };
  let last = 0;
  while (!last) {
    last = bits(1);
    const type = bits(2);
    if (type === 0) {
      // stored: drop to the byte boundary (whole bytes still buffered are given back)
      pos -= bitCnt >> 3;
      bitBuf = 0;
      bitCnt = 0;
      const len = input[pos] | (input[pos + 1] << 8);
      pos += 4;
      if (pos + len > n || o + len > size) throw malformed();
      out.set(input.subarray(pos, pos + len), o);
      pos += len;
      o += len;
      continue;
    }
    let lit;
    let dist;
    if (type === 1) [lit, dist] = fixedCodes();
    else if (type === 2) {
      const hlit = bits(5) + 257;
      const hdist = bits(5) + 1;
      const hclen = bits(4) + 4;
      const cl = new Uint8Array(19);
      for (let i = 0; i < hclen; i++) cl[CL_ORDER[i]] = bits(3);
      const clCode = table(cl);
      const lengths = new Uint8Array(hlit + hdist);
      for (let i = 0; i < hlit + hdist; ) {
        const sym = decode(clCode);
        if (sym < 16) lengths[i++] = sym;
        else {
          let rep;
          let val = 0;
          if (sym === 16) {
            if (i === 0) throw malformed();
            val = lengths[i - 1];
            rep = 3 + bits(2);
          } else if (sym === 17) rep = 3 + bits(3);
          else rep = 11 + bits(7);
          if (i + rep > hlit + hdist) throw malformed();
          lengths.fill(val, i, i + rep);
          i += rep;
        }
      }
      lit = table(lengths.subarray(0, hlit));
      dist = table(lengths.subarray(hlit));
    } else throw malformed();
    // The hot loop, with the bit reader inlined (its state in locals).
    const lt = lit.t;
    const lmask = lit.mask;
    const dt = dist.t;
    const dmask = dist.mask;
    let b = bitBuf;
    let c = bitCnt;
    let p = pos;
    for (;;) {
      while (c < 24) {
        b |= (p < n ? input[p] : 0) << c;
        p++;
        c += 8;
      }
      let e = lt[b & lmask];
      let len = e & 15;
      if (len === 0) throw malformed();
      b >>>= len;
      c -= len;
      const sym = e >>> 4;
      if (sym < 256) {
        if (o >= size) throw malformed();
        out[o++] = sym;
        continue;
      }
      if (sym === 256) break;
      const l = sym - 257;
      if (l >= 29) throw malformed();
      // length extra bits (at most 5) and the distance code (at most 15) fit in the 24 read
      let extra = LEN_EXTRA[l];
      let length = LEN_BASE[l] + (b & ((1 << extra) - 1));
      b >>>= extra;
      c -= extra;
      while (c < 24) {
        b |= (p < n ? input[p] : 0) << c;
        p++;
        c += 8;
      }
      e = dt[b & dmask];
      len = e & 15;
      if (len === 0) throw malformed();
      b >>>= len;
      c -= len;
      const d = e >>> 4;
      if (d >= 30) throw malformed();
      extra = DIST_EXTRA[d];
      while (c < extra) {
        b |= (p < n ? input[p] : 0) << c;
        p++;
        c += 8;
      }
      const back = DIST_BASE[d] + (b & ((1 << extra) - 1));
      b >>>= extra;
      c -= extra;
      if (back > o || o + length > size) throw malformed();
      if (back >= length) out.copyWithin(o, o - back, o - back + length);
      else for (let i = 0; i < length; i++) out[o + i] = out[o + i - back];
      o += length;
    }
    bitBuf = b;
    bitCnt = c;
    pos = p;
  }
  if (o !== size || pos - (bitCnt >> 3) > n) throw malformed();
  return out;
}
