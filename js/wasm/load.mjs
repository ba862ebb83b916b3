// How partkit's WebAssembly is found: by the module system, as data. Each domain's wasm is
// compressed with LZMA and written as a base64 JSON string, dist/wasm/<domain>.json, which the
// domain's code imports (`require` from dist/index.cjs, `import … with {type: 'json'}` from
// dist/browser/); the first call of one of that domain's functions unpacks and compiles it,
// synchronously. No file path to compute, no fetch, no top-level await: the same code runs in
// Node, in browsers, in every bundler and in jest's jsdom environment without configuration,
// and a page or process pays only for the domains it calls (docs/wasm.md, "Bundlers and test
// runners").
import {unlzmaWasm} from '../../pkg/unlzma/index.mjs';
import {PartkitError} from '../errors.mjs';

/**
 * `new WebAssembly.Module(bytes)`, where a page's Content-Security-Policy that does not allow
 * 'wasm-unsafe-eval' (browsers refuse to compile any WebAssembly then) gives PartkitError
 * `WASM_UNSAFE_EVAL_REQUIRED`, naming the source the policy needs, instead of a bare CompileError.
 */
function compile(bytes) {
  try {
    return new WebAssembly.Module(bytes);
  } catch (error) {
    if (/unsafe-eval|Content[- ]Security[- ]Policy|\bCSP\b/i.test(String(error?.message))) {
      throw new PartkitError(
        "partkit: this page's Content-Security-Policy blocks WebAssembly: its script-src must allow 'wasm-unsafe-eval' " +
          `(e.g. script-src 'self' 'wasm-unsafe-eval'; see partkit's docs/wasm.md) (${error.message})`,
        'WASM_UNSAFE_EVAL_REQUIRED',
        [],
      );
    }
    throw error;
  }
}

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

const malformed = () => new Error('partkit: malformed wasm data');
/** The LZMA decoder's compiled module (crates/unlzma, carried inline as base64: about 3 KB). */
let decoder;

/**
 * The `size` bytes that `packed` (LZMA: a properties byte, then the range coder's stream)
 * unpacks to. Each call gets an instance of its own, whose memory (the decoder's table, the
 * input, the output) is garbage once the output is copied out.
 */
export function unlzma(packed, size) {
  decoder ??= compile(base64Bytes(unlzmaWasm));
  const {memory, input: inputAt, decode} = new WebAssembly.Instance(decoder).exports;
  const input = inputAt();
  const output = input + packed.length;
  const grow = output + size - memory.buffer.byteLength;
  if (grow > 0) memory.grow(Math.ceil(grow / 65536));
  new Uint8Array(memory.buffer, input, packed.length).set(packed);
  let ok;
  try {
    ok = decode(packed.length, size);
  } catch {
    ok = 0;
  }
  if (!ok) throw malformed();
  return new Uint8Array(memory.buffer, output, size).slice();
}

/** The compiled module of a domain's wasm of `size` bytes, given packed as base64. */
export function wasmModule(base64, size) {
  return compile(unlzma(base64Bytes(base64), size));
}
