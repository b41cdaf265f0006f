import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The documentation a user clones must stand on its own (issue #15, item 6). */

const root = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');
const DOCS = ['README.md', 'docs/behaviour.md'];

describe('documentation', () => {
  it('points to nothing outside the repository: every relative link resolves, no SPEC.md', () => {
    for (const doc of DOCS) {
      const text = read(doc);
      expect(text, doc).not.toMatch(/SPEC\.md|kept beside/);
      const base = new URL(doc, root);
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        expect(existsSync(new URL(target!, base)), `${doc} → ${target}`).toBe(true);
      }
    }
  });

  it('keeps the quick start to two commands', () => {
    const quickStart = /## Quick start[\s\S]*?```sh\n([\s\S]*?)```/.exec(read('README.md'))?.[1] ?? '';
    expect(
      quickStart
        .trim()
        .split('\n')
        .map((line) => line.replace(/\s+#.*$/, '')),
    ).toEqual(['npm ci && npm start', 'npm test']);
  });

  it('describes every event type and every config key a user can set', async () => {
    const behaviour = read('docs/behaviour.md');
    // The event union is the wire contract of /events: each `type` of src/events/daemon-events.ts, and the
    // feed's own `hello`, has a row in the event table.
    const types = [...read('src/events/daemon-events.ts').matchAll(/^\s+type: '([a-z_.]+)';$/gm)].map((m) => m[1]!);
    expect(types.length).toBeGreaterThan(10);
    for (const type of [...types, 'hello'])
      expect(behaviour, type).toMatch(new RegExp(`^\\| \`${type.replace('.', '\\.')}\`( / \`[a-z.]+\`)? \\||^\\| \`[a-z.]+\` / \`${type.replace('.', '\\.')}\` \\|`, 'm'));
    const { ServerConfigSchema } = await import('../../src/config/server-schema.js');
    const readme = read('README.md');
    for (const key of Object.keys(ServerConfigSchema.shape)) expect(readme, key).toContain(`\`${key}\``);
  });

  it('lists every server status and every tools.changed cause the source has', async () => {
    const behaviour = read('docs/behaviour.md');
    const { SERVER_STATUSES, TOOLS_CHANGED_CAUSES } = await import('../../src/events/daemon-events.js');
    for (const status of SERVER_STATUSES) expect(behaviour, status).toMatch(new RegExp(`^\\| \`${status}\` \\| \\S`, 'm'));
    for (const cause of TOOLS_CHANGED_CAUSES) expect(behaviour, cause).toContain(`\`${cause}\``);
  });

  it('has a table of contents naming every section of the README, and every #anchor resolves', () => {
    const readme = read('README.md');
    const toc = /## Contents\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? '';
    const sections = [...readme.matchAll(/^#{2,3} (.+)$/gm)].map((m) => m[1]!).filter((h) => h !== 'Contents');
    for (const heading of sections) expect(toc, heading).toContain(`[${heading}](#${slug(heading)})`);
    // A link's anchor names a heading of its target file (or of the same file).
    const anchorsOf = (url: URL): string[] => [...readFileSync(url, 'utf8').matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1]!));
    for (const doc of DOCS) {
      const base = new URL(doc, root);
      for (const [, target, anchor] of read(doc).matchAll(/\]\(([^)#\s]*)#([^)\s]+)\)/g)) {
        expect(anchorsOf(new URL(target || doc, target ? base : root)), `${doc} → ${target}#${anchor}`).toContain(anchor);
      }
    }
  });
});

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}
