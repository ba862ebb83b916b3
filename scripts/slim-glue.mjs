// The browser build's wasm-bindgen glue, slimmed (an esbuild plugin of scripts/build.mjs, for
// dist/browser/ only): the parts of wasm-bindgen 0.2.130's `--target web` glue
// (pkg/<domain>/partkit.js) that partkit never runs in a browser are dropped as it is bundled;
// pkg/ and dist/index.cjs keep the glue as generated. Every rewrite must match: a wasm-bindgen
// upgrade that changes the glue fails the build here instead of shipping it unslimmed.
import {readFileSync} from 'node:fs';
export const SLIM_GLUE = {
  // initSync is only called as initSync({module: WebAssembly.Module}) (pkg/<domain>/index.mjs);
  // the instance and module are never read again
  init: [
    [/function initSync\(module\) \{[\s\S]*?\n\}\n/, 'function initSync({module}) {\n    if (wasm !== undefined) return wasm;\n    return __wbg_finalize_init(new WebAssembly.Instance(module, __wbg_get_imports()));\n}\n'],
    [/let wasmModule, wasmInstance, wasm;\nfunction __wbg_finalize_init\(instance, module\) \{\n    wasmInstance = instance;\n    wasm = instance.exports;\n    wasmModule = module;\n/,
      'let wasm;\nfunction __wbg_finalize_init(instance) {\n    wasm = instance.exports;\n'],
  ],
  // every browser of the es2022 target has FinalizationRegistry
  fr: [[/\(typeof FinalizationRegistry === 'undefined'\)\n    \? \{ register: \(\) => \{\}, unregister: \(\) => \{\} \}\n    : /g, '']],
  // every browser has TextEncoder.prototype.encodeInto, and so has js/wasm/text.mjs' encoder (jsdom's fallback)
  enc: [[/\nif \(!\('encodeInto' in cachedTextEncoder\)\) \{[\s\S]*?\n\}\n/, '\n']],
  // every call passes realloc
  realloc: [[/    if \(realloc === undefined\) \{[\s\S]*?\n    \}\n/, '']],
  // __destroy_into_raw is called by free() alone (no export takes a class by value): one method
  destroy: [[/    __destroy_into_raw\(\) \{\n        const ptr = this\.__wbg_ptr;\n        this\.__wbg_ptr = 0;\n        (\w+)\.unregister\(this\);\n        return ptr;\n    \}\n    free\(\) \{\n        const ptr = this\.__destroy_into_raw\(\);\n/g,
    '    free() {\n        const ptr = this.__wbg_ptr;\n        this.__wbg_ptr = 0;\n        $1.unregister(this);\n']],
  // the glue's objects never reach users (the js/ classes hold them in private fields and call free())
  dispose: [[/\nif \(Symbol\.dispose\) (\w+)\.prototype\[Symbol\.dispose\] = \1\.prototype\.free;\n/g, '\n']],
};
export function slimGlue(text, names = Object.keys(SLIM_GLUE)) {
  if (names.includes('destroy') && (text.match(/__destroy_into_raw\(\)/g) ?? []).length !== 2 * (text.match(/\n    free\(\) \{\n/g) ?? []).length) {
    throw new Error('build: wasm-bindgen glue calls __destroy_into_raw outside free()');
  }
  if (names.includes('realloc') && /passStringToWasm0\((?![^)]*wasm\.__wbindgen_realloc\))[^)]*\)(?! \{)/.test(text)) {
    throw new Error('build: wasm-bindgen glue passes a string without realloc');
  }
  for (const name of names) {
    for (const [from, to] of SLIM_GLUE[name]) {
      const next = text.replace(from, to);
      if (next === text) throw new Error(`build: wasm-bindgen's glue has changed: the slimming "${name}" (${from}) does not match`);
      text = next;
    }
  }
  return text;
}
export const slimGluePlugin = (names) => ({
  name: 'partkit-slim-glue',
  setup(build) {
    build.onLoad({filter: /[\\/]pkg[\\/][a-z]+[\\/]partkit\.js$/}, ({path}) => ({contents: slimGlue(readFileSync(path, 'utf8'), names), loader: 'js'}));
  },
});
