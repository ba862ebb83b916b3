// How partkit's WebAssembly is found: by the module system, as data. Each domain's wasm is
// deflated and written as a base64 JSON string, dist/wasm/<domain>.json, which the domain's
// code imports (`require` from dist/index.cjs, `import … with {type: 'json'}` from
// dist/browser/); the first call of one of that domain's functions inflates and compiles it,
// synchronously. No file path to compute, no fetch, no top-level await: the same code runs in
// Node, in browsers, in every bundler and in jest's jsdom environment without configuration,
// and a page or process pays only for the domains it calls (docs/wasm.md, "Bundlers and test
// runners").
import {inflate} from './inflate.mjs';

/** The bytes of `base64` (standard alphabet, padded). */
function base64Bytes(base64) {
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(base64);
  const NodeBuffer = globalThis.Buffer;
  if (typeof NodeBuffer === 'function' && typeof NodeBuffer.from === 'function') {
    const b = NodeBuffer.from(base64, 'base64');
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** Node's own inflate where there is one (found without a static import bundlers would follow). */
function nativeInflate() {
  try {
    return globalThis.process?.getBuiltinModule?.('node:zlib')?.inflateRawSync;
  } catch {
    return undefined;
  }
}

/** The compiled module of a domain's wasm of `size` bytes, given deflated as base64. */
export function wasmModule(base64, size) {
  const deflated = base64Bytes(base64);
  const native = nativeInflate();
  const bytes = native ? native(deflated) : inflate(deflated, size);
  if (bytes.length !== size) throw new Error('partkit: malformed wasm data');
  return new WebAssembly.Module(bytes);
}
