import Fastify from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SwitchboardError } from '../../../../src/errors.js';
import { errorHandler } from '../../../../src/http/error-handler.js';
import { operationRoutes } from '../../../../src/http/routes/operations.js';
import type { ReloadOptions, SwitchboardRuntime } from '../../../../src/runtime/runtime.js';

/**
 * The operator actions' routes on a real fastify instance, answered by the app's error handler:
 * what they validate before anything runs, what they hand the runtime, and how its catalogue
 * errors come back. The runtime is the test's own, recording each call.
 */

const detail = (name: string) => ({ name, status: 'connected', toolCount: 1 });

/** What a runtime that succeeds answers: an outcome for the reload of all, else the server's detail. */
const succeeds = (op: string, arg: unknown): unknown => (op === 'reloadAll' ? { servers: [], errors: [] } : detail(arg as string));

/** The routes over a runtime that answers as `answer` says (a value, or a thrown error). */
async function operationsApp(answer: (op: string, arg: unknown) => unknown = succeeds) {
  const calls: Array<[string, unknown]> = [];
  const record = (op: string) => async (arg: unknown) => {
    calls.push([op, arg]);
    return answer(op, arg);
  };
  const runtime = { reloadAll: record('reloadAll'), reloadServer: record('reloadServer'), disconnectServer: record('disconnectServer') };
  const app = Fastify();
  app.setErrorHandler(errorHandler);
  // The routes use these three methods only; the rest of a runtime is never reached.
  await app.register(operationRoutes, { runtime: runtime as unknown as SwitchboardRuntime });
  onTestFinished(() => app.close());
  return { app, calls };
}

describe('operationRoutes', () => {
  it("reloads with force only for ?force=true, and answers with the runtime's outcome", async () => {
    const { app, calls } = await operationsApp();
    for (const url of ['/reload', '/reload?force=true', '/reload?force=false']) {
      const res = await app.inject({ method: 'POST', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.json(), url).toEqual({ servers: [], errors: [] });
    }
    const forced: ReloadOptions[] = [{ force: false }, { force: true }, { force: false }];
    expect(calls).toEqual(forced.map((options) => ['reloadAll', options]));
  });

  it("hands one server's reload and disconnect the decoded name, an empty body allowed", async () => {
    const { app, calls } = await operationsApp();
    const reload = await app.inject({ method: 'POST', url: '/servers/my%20files/reload', payload: {} });
    expect(reload.statusCode).toBe(200);
    expect(reload.json()).toEqual(detail('my files'));
    const disconnect = await app.inject({ method: 'POST', url: '/servers/git/disconnect' });
    expect(disconnect.json()).toEqual(detail('git'));
    expect(calls).toEqual([
      ['reloadServer', 'my files'],
      ['disconnectServer', 'git'],
    ]);
  });

  it('refuses a bad force or any body with 400 VALIDATION_FAILED naming the field, and runs nothing', async () => {
    const { app, calls } = await operationsApp();
    const cases: Array<[string, object | undefined, string]> = [
      ['/reload?force=yes', undefined, 'force: Expected "true" or "false"'],
      ['/reload', { force: true }, 'force: Unknown field'],
      ['/servers/git/reload', { timeoutMs: 5 }, 'timeoutMs: Unknown field'],
      ['/servers/git/disconnect', { now: true }, 'now: Unknown field'],
    ];
    for (const [url, payload, message] of cases) {
      const res = await app.inject({ method: 'POST', url, ...(payload ? { payload } : {}) });
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toEqual({ error: { code: 'VALIDATION_FAILED', message } });
    }
    expect(calls).toEqual([]);
  });

  it("answers the runtime's errors with their catalogue status and code", async () => {
    const { app } = await operationsApp((op, name) => {
      throw op === 'reloadAll' ? new SwitchboardError('SHUTTING_DOWN') : new SwitchboardError('SERVER_NOT_FOUND', `No server named "${String(name)}"`);
    });
    const missing = await app.inject({ method: 'POST', url: '/servers/nope/reload' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: { code: 'SERVER_NOT_FOUND', message: 'No server named "nope"' } });
    const stopping = await app.inject({ method: 'POST', url: '/reload' });
    expect(stopping.statusCode).toBe(503);
    expect(stopping.json()).toEqual({ error: { code: 'SHUTTING_DOWN', message: 'Switchboard is shutting down' } });
  });
});
