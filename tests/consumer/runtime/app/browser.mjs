// A page's script, bundled by each bundler under test: the result goes to <body data-result>.
import {check, checkObjects} from './check.mjs';

const params = new URLSearchParams(location.search);
try {
  document.body.dataset.result = params.has('objects') ? `${check()} ${checkObjects()}` : check();
} catch (error) {
  document.body.dataset.result = `error: ${error?.message}`;
}
