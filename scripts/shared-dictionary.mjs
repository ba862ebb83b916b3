// The shared dictionary of scripts/build.mjs: the byte strings that several domains' WebAssembly
// modules have in common (the standard library's formatting and collections, the allocator,
// serde, wasm-bindgen's runtime, partkit's errors), gathered once. The build packs each of those
// domains with LZMA against it, so that what they share is carried once, in
// dist/wasm/shared.json, instead of once per module (docs/wasm.md).
//
// How: every window of WINDOW bytes of every module is hashed; a module's bytes covered by
// windows that another module has too form runs, and each run of at least MIN_RUN bytes that is
// mostly new to the dictionary is appended to it, the largest module's first. Deterministic: the
// same modules give the same dictionary.

const WINDOW = 16;
const MIN_RUN = 32;

/** Two 32-bit FNV-1a hashes (different offsets) of `b[i..i + WINDOW]`, as one 53-bit number. */
function windowKey(b, i) {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let j = i; j < i + WINDOW; j++) {
    h1 = Math.imul(h1 ^ b[j], 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ b[j], 0x0100019d) >>> 0;
  }
  return h1 * 0x200000 + (h2 & 0x1fffff);
}

/** The dictionary for `modules` (an array of byte arrays), as one byte array. */
export function sharedDictionary(modules) {
  const keys = modules.map((b) => {
    const k = new Float64Array(Math.max(0, b.length - WINDOW + 1));
    for (let i = 0; i < k.length; i++) k[i] = windowKey(b, i);
    return k;
  });
  // in how many modules each window occurs
  const modulesWith = new Map();
  for (const k of keys) {
    for (const key of new Set(k)) modulesWith.set(key, (modulesWith.get(key) ?? 0) + 1);
  }
  const order = modules.map((_, i) => i).sort((a, b) => modules[b].length - modules[a].length || a - b);
  const parts = [];
  const inDictionary = new Set();
  for (const m of order) {
    const b = modules[m];
    const k = keys[m];
    const shared = new Uint8Array(b.length);
    for (let i = 0; i < k.length; i++) {
      if (modulesWith.get(k[i]) >= 2) shared.fill(1, i, i + WINDOW);
    }
    for (let i = 0; i < b.length;) {
      if (!shared[i]) {
        i++;
        continue;
      }
      let j = i;
      while (j < b.length && shared[j]) j++;
      if (j - i >= MIN_RUN) {
        let fresh = 0;
        for (let s = i; s + WINDOW <= j; s += WINDOW) if (!inDictionary.has(k[s])) fresh++;
        if (fresh * WINDOW > (j - i) / 2) {
          parts.push(b.subarray(i, j));
          for (let s = i; s + WINDOW <= j; s++) inDictionary.add(k[s]);
        }
      }
      i = j;
    }
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
