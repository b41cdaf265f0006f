import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { parse } from 'yaml';
import { loadDaemonConfig } from '../../src/config/load.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { localDirectives, NGINX_BIN, runNginx } from '../helpers/nginx.js';

/**
 * deploy/compose (issue #28, item 5). No Docker engine runs in CI, so `docker compose config`
 * cannot; instead the compose file is checked for the facts that matter (its schema is checked
 * by dclint in `npm run lint:deploy`), the replicas' config file goes through the daemon's own
 * loader, and the checked-in nginx.conf is run by a real nginx — `nginx -t`, then in front of
 * two real daemons — with only its container names and paths made local.
 */

const composeDir = new URL('../../deploy/compose/', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, composeDir), 'utf8');
const NGINX_CONF = read('nginx.conf');

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** deploy/compose/nginx.conf with the replicas at `upstreams`, listening on 127.0.0.1:port, files under prefix. */
function localNginxConf(upstreams: readonly string[], port: number, prefix: string): string {
  const local = localDirectives(prefix);
  const text = NGINX_CONF.replace(/switchboard-(\d):7337/g, (_match, n: string) => upstreams[Number(n) - 1] as string)
    .replace(/^\s*listen 8080;$/m, `    listen 127.0.0.1:${port};`)
    .replace(/^pid .*;$/m, `pid ${prefix}/nginx.pid;`)
    // A test worker's stderr is a pipe nginx cannot open() by path, as it can in a container.
    .replace(/^error_log \/dev\/stderr (\w+);$/m, `error_log ${prefix}/error.log $1;`)
    .replace(/^\s*access_log .*;\n/m, '')
    .replace(/^http \{$/m, `http {\n${local.http}`);
  for (const name of ['switchboard-1', 'switchboard-2', 'listen 8080', '/tmp/nginx.pid', '/dev/std']) expect(text).not.toContain(name);
  return local.main + text;
}

describe('compose file deploy/compose', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as Doc;

  it('runs two Switchboard replicas of one image on PostgreSQL 15, behind nginx', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['nginx', 'postgres', 'switchboard-1', 'switchboard-2']);
    const replicas = [compose.services['switchboard-1'], compose.services['switchboard-2']] as Doc[];
    for (const replica of replicas) {
      expect(replica.build.context).toBe('../..');
      expect(replica.image).toBe('switchboard:local');
      expect(replica.environment.SWITCHBOARD_DATABASE_URL).toMatch(/^postgres:\/\/switchboard:.*@postgres:5432\/switchboard$/);
      // No default token: compose refuses to start without one.
      expect(replica.environment.SWITCHBOARD_TOKEN).toMatch(/^\$\{SWITCHBOARD_TOKEN:\?/);
      expect(replica.depends_on.postgres.condition).toBe('service_healthy');
      expect(replica.volumes).toContain('./switchboard.jsonc:/etc/switchboard/config.jsonc:ro');
      expect(replica.environment.SWITCHBOARD_CONFIG).toBe('/etc/switchboard/config.jsonc');
    }
    expect(existsSync(new URL('../../Dockerfile', composeDir))).toBe(true);
    expect(compose.services.postgres.image).toBe('postgres:15');
    expect(compose.services.postgres.healthcheck.test).toContain('pg_isready');
    expect(compose.services.nginx.volumes).toContain('./nginx.conf:/etc/nginx/nginx.conf:ro');
    expect(compose.services.nginx.ports).toEqual(['127.0.0.1:8080:8080']);
    expect(Object.keys(compose.services.nginx.depends_on).sort()).toEqual(['switchboard-1', 'switchboard-2']);
  });

  it("gives the replicas a config file the daemon's own loader accepts", async () => {
    const config = await loadDaemonConfig({ path: new URL('switchboard.jsonc', composeDir).pathname, env: {}, home: tmpdir() });
    expect(config.host).toBe('0.0.0.0');
    expect(config.port).toBe(7337);
    expect(config.allowedHosts).toEqual(expect.arrayContaining(['switchboard-1', 'switchboard-2']));
    expect(config.allowedOrigins).toContain('http://localhost:8080');
  });

  it('has an nginx.conf sticky on Mcp-Session-Id for /mcp, round-robin otherwise, that `nginx -t` accepts', () => {
    const sessions = /upstream switchboard_sessions \{([^}]*)\}/.exec(NGINX_CONF)?.[1] ?? '';
    expect(sessions).toMatch(/^\s*hash \$http_mcp_session_id consistent;$/m);
    const plain = /upstream switchboard \{([^}]*)\}/.exec(NGINX_CONF)?.[1] ?? '';
    expect(plain).not.toContain('hash');
    expect(NGINX_CONF).toMatch(/location = \/mcp \{\s*proxy_pass http:\/\/switchboard_sessions;/);
    expect(NGINX_CONF).toMatch(/location = \/events \{\s*proxy_pass http:\/\/switchboard;/);
    for (const directive of ['proxy_buffering off;', 'proxy_http_version 1.1;', 'proxy_set_header Connection $connection_upgrade;', 'proxy_set_header Upgrade $http_upgrade;']) {
      expect(NGINX_CONF).toContain(directive);
    }

    const prefix = mkdtempSync(join(tmpdir(), 'sb-nginx-t-'));
    onTestFinished(() => rmSync(prefix, { recursive: true, force: true }));
    writeFileSync(join(prefix, 'nginx.conf'), localNginxConf(['127.0.0.1:7337', '127.0.0.1:7338'], 8080, prefix));
    const result = spawnSync(NGINX_BIN, ['-t', '-p', prefix, '-c', join(prefix, 'nginx.conf'), '-e', join(prefix, 'error.log')], { encoding: 'utf8' });
    expect(result.stderr).toContain('test is successful');
    expect(result.status).toBe(0);
  });

  it('serves two real daemons through the checked-in nginx.conf: REST round-robin, /mcp sticky, /events upgraded', async () => {
    const replicas: TestDaemon[] = await Promise.all([startDaemon(), startDaemon()]);
    const ids = await Promise.all(replicas.map(async (replica) => (await replica.json<{ instance: { id: string } }>('/status')).body.instance.id));
    const upstreams = replicas.map((replica) => new URL(replica.url).host);
    const nginx = await runNginx((port, prefix) => localNginxConf(upstreams, port, prefix), onTestFinished);
    const statusVia = async (headers: Record<string, string> = {}): Promise<string> => {
      const res = await fetch(`${nginx.url}/status`, { headers });
      expect(res.status, await nginx.errorLog()).toBe(200);
      return ((await res.json()) as { instance: { id: string } }).instance.id;
    };

    const roundRobin: string[] = [];
    for (let i = 0; i < 4; i++) roundRobin.push(await statusVia());
    expect(roundRobin).toEqual(roundRobin[0] === ids[0] ? [ids[0], ids[1], ids[0], ids[1]] : [ids[1], ids[0], ids[1], ids[0]]);

    // /mcp goes to the hashed upstream: one session id, one replica (seen in its access log).
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${nginx.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 'compose-session' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/list' }),
      });
      await res.text();
    }
    const mcp = (await nginx.accessLog()).filter((entry) => entry.path === '/mcp');
    expect(mcp.map((entry) => entry.sessionId)).toEqual(['compose-session', 'compose-session', 'compose-session', 'compose-session']);
    expect(new Set(mcp.map((entry) => entry.upstream)).size).toBe(1);

    const ws = new WebSocket(`${nginx.url.replace('http', 'ws')}/events`);
    onTestFinished(() => ws.terminate());
    const first = await new Promise<Doc>((resolve, reject) => {
      ws.once('message', (data) => resolve(JSON.parse(String(data)) as Doc));
      ws.once('error', reject);
    });
    expect(first.type).toBe('hello');
  });
});
