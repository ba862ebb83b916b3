// A connector's entry point, bundled by esbuild --platform=node (CJS and ESM) and run.
import {check, checkObjects} from './check.mjs';

console.log(`esbuild node bundle: ${check()} ${checkObjects()}`);
