// Browser entry: loads the wasm (fetched next to pkg/web/partkit.js) before exporting.
import init from '#wasm';

await init();

export * from './index.mjs';
