import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT } from '../../src/http/app.js';
import { startDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/fixtures.js';
import { tempDir, waitForFile } from '../helpers/process.js';
import { rawExchange, type RawAnswer } from '../helpers/raw-http.js';
import { spawnServe } from '../helpers/serve-process.js';
import { sharedByTests, sharedWithCleanup, startAhead } from '../helpers/shared.js';

/*
 * A body over the limit is refused before it is read, and the refusal must reach the client:
 * the server answers while the client is still sending, and a socket closed with unread data is
 * reset (the client, still writing, fails with EPIPE and drops the answer). So the daemon
 * lingers: it reads and drops the rest of the body, within bounds, before it closes. These tests
 * use a raw socket that keeps writing the whole body, the way a naive client does, and must
 * still read a JSON answer rather than only a reset.
 */

/** POSTs `bytes` of body through a raw socket that writes all of it, whatever happens, reading all along. */
function postOversized(url: string, path: string, bytes: number, framing: 'length' | 'chunked', headers = ''): Promise<RawAnswer> {
  const framingHeader = framing === 'length' ? `content-length: ${bytes}` : 'transfer-encoding: chunked';
  const head = `POST ${path} HTTP/1.1\r\nhost: ${new URL(url).host}\r\ncontent-type: application/json\r\n${framingHeader}\r\n${headers}\r\n`;
  return rawExchange(url, head, { bytes, framing: framing === 'length' ? 'raw' : 'chunked' });
}

describe('a request body over the limit', () => {
  // Started in beforeAll, all at once, instead of one test after another (the worker idle while
  // each started). Both framings are refused by one daemon, which must stay none the worse.
  const plain = sharedByTests(
    () => startDaemon({ lifetime: 'manual' }),
    (sb) => sb.close(),
  );
  const serveProcess = sharedWithCleanup(async (cleanup) => {
    const dir = await tempDir(cleanup);
    const configPath = join(dir, 'switchboard.json');
    await writeFile(configPath, JSON.stringify({ dbPath: join(dir, 'cache.db') }));
    return spawnServe(['--config', configPath, '--port', '0'], { home: dir, cwd: dir }, cleanup).listening();
  });
  const withSlowTool = sharedByTests(
    () => startDaemon({ servers: { slow: fixtureServerConfig('slow-tool') }, lifetime: 'manual' }),
    (sb) => sb.close(),
  );
  beforeAll(() => startAhead(plain, serveProcess, withSlowTool));

  it.each(['length', 'chunked'] as const)('gets its 413 JSON answer before the socket closes (%s framing)', async (framing) => {
    const sb = await plain();
    for (const bytes of [BODY_LIMIT + 1024 * 1024, 16 * BODY_LIMIT]) {
      const answer = await postOversized(sb.url, '/tools/mcp_x_y/call', bytes, framing);
      expect(answer.status, `${bytes} bytes`).toBe(413);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toEqual({ error: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large' } });
    }
    // The daemon is none the worse for it.
    expect((await sb.fetch('/health')).status).toBe(200);
  });

  it('reaches every client of a real serve process, 20 MiB bodies with Connection: close, 20 times per framing', async () => {
    const url = await serveProcess();
    const bytes = 20 * 1024 * 1024;
    for (const framing of ['length', 'chunked'] as const) {
      for (let i = 0; i < 20; i++) {
        const answer = await postOversized(url, '/tools/mcp_x_y/call', bytes, framing, 'connection: close\r\n');
        expect(answer.status, `${framing} #${i}`).toBe(413);
        expect(answer.headers.connection).toBe('close');
        expect(JSON.parse(answer.body)).toEqual({ error: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large' } });
      }
    }
  }, 60_000);

  it('during the shutdown drain gets its 503 SHUTTING_DOWN answer the same way', async () => {
    const dir = await tempDir();
    const sb = await withSlowTool();
    const [release, started] = [join(dir, 'release'), join(dir, 'started')];
    const call = sb.json('/tools/mcp_slow_slow/call', { method: 'POST', body: { arguments: { durationMs: 0, untilFile: release, startedFile: started } } });
    await waitForFile(started);
    const closing = sb.close();

    const answer = await postOversized(sb.url, '/tools/mcp_slow_slow/call', 2 * BODY_LIMIT, 'length');
    expect(answer.status).toBe(503);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'SHUTTING_DOWN' } });

    await writeFile(release, 'go');
    expect((await call).status).toBe(200);
    await closing;
  });
});
