// node:fs plus a globSync for Node 20 (the suite imports it by name; Node 22 has it).
import fs from 'node:fs';
import path from 'node:path';
export * from 'node:fs';
export default fs;
function toRegExp(pattern) {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      re += '.*';
      i++;
      if (pattern[i + 1] === '/') i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp('^' + re + '$');
}
export function globSync(pattern, opts = {}) {
  const cwd = opts.cwd ?? process.cwd();
  const patterns = Array.isArray(pattern) ? pattern : [pattern];
  const res = patterns.map(toRegExp);
  const out = [];
  const walk = (dir, rel) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const r = rel ? rel + '/' + e.name : e.name;
      if (res.some((re) => re.test(r))) out.push(r);
      if (e.isDirectory() && e.name !== 'node_modules') walk(path.join(dir, e.name), r);
    }
  };
  walk(cwd, '');
  return out;
}
