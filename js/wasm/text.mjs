// wasm-bindgen's glue reads and writes strings with TextDecoder and TextEncoder, which some
// environments that run partkit lack (jest's jsdom environment has neither). scripts/build.mjs
// injects these two names into the glue of both builds (dist/<domain>.cjs and dist/browser/):
// the platform's own classes where they exist, else these small UTF-8 equivalents (only what the
// glue calls: `decode`, `encode` and `encodeInto`).

class Utf8Decoder {
  decode(bytes) {
    if (bytes === undefined) return '';
    let out = '';
    const units = [];
    for (let i = 0; i < bytes.length; ) {
      const b = bytes[i++];
      let cp;
      if (b < 0x80) cp = b;
      else if (b < 0xe0) cp = ((b & 0x1f) << 6) | (bytes[i++] & 0x3f);
      else if (b < 0xf0) cp = ((b & 0x0f) << 12) | ((bytes[i++] & 0x3f) << 6) | (bytes[i++] & 0x3f);
      else cp = ((b & 0x07) << 18) | ((bytes[i++] & 0x3f) << 12) | ((bytes[i++] & 0x3f) << 6) | (bytes[i++] & 0x3f);
      if (cp > 0xffff) {
        cp -= 0x10000;
        units.push(0xd800 | (cp >> 10), 0xdc00 | (cp & 0x3ff));
      } else units.push(cp);
      if (units.length >= 8192) {
        out += String.fromCharCode.apply(null, units);
        units.length = 0;
      }
    }
    return out + String.fromCharCode.apply(null, units);
  }
}

class Utf8Encoder {
  encode(text = '') {
    const out = [];
    for (let i = 0; i < text.length; i++) {
      let cp = text.charCodeAt(i);
      if (cp >= 0xd800 && cp <= 0xdfff) {
        const next = text.charCodeAt(i + 1);
        if (cp < 0xdc00 && next >= 0xdc00 && next <= 0xdfff) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (next - 0xdc00);
          i++;
        } else cp = 0xfffd; // a lone surrogate, as TextEncoder writes it
      }
      if (cp < 0x80) out.push(cp);
      else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
      else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
      else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    }
    return new Uint8Array(out);
  }

  /** `text` encoded into `view` (which wasm-bindgen's glue always makes large enough). */
  encodeInto(text, view) {
    const bytes = this.encode(text);
    view.set(bytes);
    return {read: text.length, written: bytes.length};
  }
}

const platform = globalThis;
const Decoder = typeof platform.TextDecoder === 'function' ? platform.TextDecoder : Utf8Decoder;
const Encoder = typeof platform.TextEncoder === 'function' ? platform.TextEncoder : Utf8Encoder;
export {Decoder as TextDecoder, Encoder as TextEncoder};
