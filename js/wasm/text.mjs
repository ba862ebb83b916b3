// wasm-bindgen's glue reads and writes strings with TextDecoder and TextEncoder, which jest's
// jsdom environment lacks. scripts/build.mjs injects these two names into the glue of both builds
// (dist/<domain>.cjs and dist/browser/): the platform's own classes where they exist, else UTF-8
// made of the platform's URI functions (only what the glue calls: `decode`, `encode`, `encodeInto`;
// a lone surrogate becomes U+FFFD, as TextEncoder writes it).
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

class Utf8 {
  decode(bytes = []) {
    return decodeURIComponent(Array.from(bytes, (b) => (b < 16 ? '%0' : '%') + b.toString(16)).join(''));
  }

  encode(text = '') {
    return Uint8Array.from(unescape(encodeURIComponent(text.replace(LONE, '\ufffd'))), (c) => c.charCodeAt(0));
  }

  encodeInto(text, view) {
    const bytes = this.encode(text);
    view.set(bytes);
    return {read: text.length, written: bytes.length};
  }
}

const platform = globalThis;
const Decoder = typeof platform.TextDecoder === 'function' ? platform.TextDecoder : Utf8;
const Encoder = typeof platform.TextEncoder === 'function' ? platform.TextEncoder : Utf8;
export {Decoder as TextDecoder, Encoder as TextEncoder};
