import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * No Docker engine runs in CI, so the Dockerfile's structure is checked here: the parts that,
 * when lost in an edit, give an image that builds but does not work (or runs as root).
 */

const root = new URL('../../', import.meta.url);
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');
const dockerignore = readFileSync(new URL('.dockerignore', root), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

interface Instruction {
  keyword: string;
  args: string;
}

/** Instructions with continuation lines joined and comments dropped. */
function instructions(text: string): Instruction[] {
  const logical = text
    .split('\n')
    .filter((line) => !line.trim().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ');
  return logical
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
}

function stages(all: Instruction[]): Instruction[][] {
  const out: Instruction[][] = [];
  for (const instruction of all) {
    if (instruction.keyword === 'FROM') out.push([]);
    out.at(-1)?.push(instruction);
  }
  return out;
}

const all = instructions(dockerfile);
const [build = [], runtime = [], ...extra] = stages(all);
const find = (stage: Instruction[], keyword: string) => stage.filter((i) => i.keyword === keyword);
const runs = (stage: Instruction[]) =>
  find(stage, 'RUN')
    .map((i) => i.args)
    .join('\n');

describe('Dockerfile', () => {
  it('has a build stage and a runtime stage, both on the same supported Node LTS (22 or 24) slim image', () => {
    expect(extra).toEqual([]);
    const base = /^node:(22|24)-slim/i.exec(build[0]?.args ?? '')?.[0];
    expect(base).toBeDefined();
    expect(build[0]?.args).toMatch(/^node:(22|24)-slim\s+AS\s+build$/i);
    expect(runtime[0]?.args).toMatch(new RegExp(`^${base}(\\s+AS\\s+\\w+)?$`, 'i'));
    // better-sqlite3 must support that Node line (its engines field names the majors it builds for).
    const engines = (JSON.parse(readFileSync(new URL('node_modules/better-sqlite3/package.json', root), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines).toContain(`${base!.split(':')[1]!.split('-')[0]}.x`);
  });

  it('builds with the native toolchain, npm ci, the build script and a production prune', () => {
    const script = runs(build);
    for (const pkg of ['python3', 'make', 'g++']) expect(script).toContain(pkg);
    const order = ['npm ci', 'npm run build', 'npm prune --omit=dev'].map((step) => script.indexOf(step));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('ships only the built app, production node_modules, package.json and openapi.yaml', () => {
    const copies = find(runtime, 'COPY').map((i) => i.args);
    expect(copies).toContainEqual(expect.stringMatching(/^--from=build\s+\/app\/dist\s/));
    expect(copies).toContainEqual(expect.stringMatching(/^--from=build\s+\/app\/node_modules\s/));
    const plain = copies.filter((args) => !args.startsWith('--from')).join(' ');
    expect(plain).toContain('package.json');
    expect(plain).toContain('openapi.yaml');
    expect(runs(runtime)).not.toMatch(/\b(g\+\+|make|python3)\b/);
  });

  it('runs as a non-root user with the state directory on a /data volume', () => {
    const user = find(runtime, 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(
      find(runtime, 'VOLUME')
        .map((i) => i.args)
        .join(' '),
    ).toContain('/data');
    // The cache path the daemon derives (src/config/load.ts defaultDbPath) must land in the volume.
    expect(
      find(runtime, 'ENV')
        .map((i) => i.args)
        .join(' '),
    ).toMatch(/XDG_STATE_HOME=\/data\b/);
  });

  it('exposes 7337, probes /health with node itself and starts `serve` on all interfaces', () => {
    expect(find(runtime, 'EXPOSE').map((i) => i.args)).toContain('7337');
    const healthcheck = find(runtime, 'HEALTHCHECK')
      .map((i) => i.args)
      .join(' ');
    expect(healthcheck).toContain('/health');
    expect(healthcheck).toMatch(/"node"/);
    expect(healthcheck).not.toMatch(/\b(curl|wget)\b/);
    const env = find(runtime, 'ENV')
      .map((i) => i.args)
      .join(' ');
    expect(env).toMatch(/SWITCHBOARD_HOST=0\.0\.0\.0/);
    const cmd = find(runtime, 'CMD').at(-1)?.args ?? '';
    expect(JSON.parse(cmd)).toEqual(expect.arrayContaining(['node', 'dist/cli.js', 'serve']));
  });

  it('copies only files that exist and that .dockerignore lets through', () => {
    const sources = find(build, 'COPY')
      .concat(find(runtime, 'COPY'))
      .filter((i) => !i.args.startsWith('--from'))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(new URL(source, root)), source).toBe(true);
      expect(dockerignore, source).not.toContain(source.replace(/^\.\//, '').replace(/\/$/, ''));
    }
    for (const heavy of ['node_modules', 'dist', '.git']) expect(dockerignore).toContain(heavy);
  });
});
