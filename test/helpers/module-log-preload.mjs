// Preloaded with `node --import` into a daemon under test (issue #26): records the URL of every
// ES module the process loads into the file named by SWITCHBOARD_MODULE_LOG, through a
// module.register load hook, so a test can tell which chunks of the CLI bundle were loaded.
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function load(url, context, next) {
  if (file) appendFileSync(file, url + '\\n');
  return next(url, context);
}`;

if (process.env.SWITCHBOARD_MODULE_LOG) {
  register(`data:text/javascript,${encodeURIComponent(hooks)}`, import.meta.url, { data: { file: process.env.SWITCHBOARD_MODULE_LOG } });
}
