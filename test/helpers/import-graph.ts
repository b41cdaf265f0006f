import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Every `.ts` file under `root`, as paths relative to it (forward slashes). */
export function sourceFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const full = join(dir, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (entry.endsWith('.ts')) out.push(relative(root, full).split('\\').join('/'));
    }
  };
  walk(root);
  return out.sort();
}

/**
 * The import graph of the files under `root`: each file → the files it imports (static imports,
 * `export … from`, type-only imports and dynamic `import()` alike — a type-only circle is still a
 * circle for a reader).
 */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const text = readFileSync(join(root, file), 'utf8');
    const info = ts.preProcessFile(text, true, true);
    const targets = new Set<string>();
    for (const ref of info.importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      const target = relative(root, resolve(dirname(join(root, file)), ref.fileName.replace(/\.js$/, '.ts')))
        .split('\\')
        .join('/');
      targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** The strongly connected components with more than one file (or a self-import): the circles. */
export function importCircles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    indices.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, indices.get(w)!));
      }
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) circles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) visit(v);
  return circles;
}

/**
 * The sub-folder a file is in, as `folder/sub` (`upstream/transport/x.ts` → `upstream/transport`;
 * deeper files count to their second-level folder), or `folder/(root)` for a folder's own files.
 */
export function subFolderOf(file: string): string {
  const parts = file.split('/');
  if (parts.length <= 1) return '(root)';
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : `${parts[0]}/(root)`;
}

/** The file graph folded onto sub-folders within each top-level folder (imports across folders are the layers' business). */
export function folderGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    const from = subFolderOf(file);
    const edges = folders.get(from) ?? new Set<string>();
    folders.set(from, edges);
    for (const target of targets) {
      const to = subFolderOf(target);
      if (to !== from && to.split('/')[0] === from.split('/')[0]) edges.add(to);
    }
  }
  return new Map([...folders].map(([folder, edges]) => [folder, [...edges].sort()]));
}
