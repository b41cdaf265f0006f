import { SwitchboardError } from '../../errors.js';

/** One step of a path: a key, an index, a slice, or every child. */
type Step = { key: string } | { index: number } | { slice: [number | undefined, number | undefined] } | { all: true };

/**
 * A JSONPath subset (issue #38 item 2): `$`, `.name`, `['name']`, `[3]`, `[-1]`, `[0:10]`, `[*]`
 * and `.*`. What a path selects: its one value when each step picks one, else the list of what it
 * picked (`$.items[0:10].name` → ten names). Missing keys select nothing.
 */
export function selectPath(root: unknown, path: string): { value: unknown; many: boolean } {
  const steps = parsePath(path);
  let nodes: unknown[] = [root];
  let many = false;
  for (const step of steps) {
    const next: unknown[] = [];
    for (const node of nodes) applyStep(node, step, next);
    if ('slice' in step || 'all' in step) many = true;
    nodes = next;
  }
  return many ? { value: nodes, many } : { value: nodes[0], many };
}

function applyStep(node: unknown, step: Step, out: unknown[]): void {
  if ('key' in step) {
    if (node !== null && typeof node === 'object' && !Array.isArray(node) && Object.hasOwn(node, step.key)) out.push((node as Record<string, unknown>)[step.key]);
    return;
  }
  if ('all' in step) {
    if (Array.isArray(node)) out.push(...node);
    else if (node !== null && typeof node === 'object') out.push(...Object.values(node));
    return;
  }
  if (!Array.isArray(node)) return;
  if ('index' in step) {
    const at = step.index < 0 ? node.length + step.index : step.index;
    if (at >= 0 && at < node.length) out.push(node[at]);
    return;
  }
  out.push(...node.slice(step.slice[0], step.slice[1]));
}

/** The steps of `path`; a path outside the subset is `VALIDATION_FAILED` naming where. */
export function parsePath(path: string): Step[] {
  if (!path.startsWith('$')) throw bad(path, 0, 'a path starts with $');
  const steps: Step[] = [];
  let at = 1;
  while (at < path.length) {
    const char = path[at];
    if (char === '.') {
      if (path[at + 1] === '*') {
        steps.push({ all: true });
        at += 2;
        continue;
      }
      const name = /^[A-Za-z_$][\w$-]*/.exec(path.slice(at + 1));
      if (!name) throw bad(path, at, 'expected a name after "."');
      steps.push({ key: name[0] });
      at += 1 + name[0].length;
    } else if (char === '[') {
      const close = path.indexOf(']', at);
      if (close < 0) throw bad(path, at, 'unclosed "["');
      steps.push(bracket(path, at, path.slice(at + 1, close).trim()));
      at = close + 1;
    } else throw bad(path, at, `unexpected "${char}"`);
  }
  return steps;
}

function bracket(path: string, at: number, inner: string): Step {
  if (inner === '*') return { all: true };
  const quoted = /^(['"])(.*)\1$/.exec(inner);
  if (quoted) return { key: quoted[2] as string };
  if (/^-?\d+$/.test(inner)) return { index: Number(inner) };
  const slice = /^(-?\d+)?\s*:\s*(-?\d+)?$/.exec(inner);
  if (slice) return { slice: [slice[1] === undefined ? undefined : Number(slice[1]), slice[2] === undefined ? undefined : Number(slice[2])] };
  throw bad(path, at, `"[${inner}]" is not an index, a slice, a quoted name or *`);
}

function bad(path: string, at: number, why: string): SwitchboardError {
  return new SwitchboardError('VALIDATION_FAILED', `path "${path}" at ${at}: ${why} (supported: $, .name, ['name'], [3], [-1], [0:10], [*], .*)`);
}
