import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { ERROR_CATALOGUE, SwitchboardError, type ErrorCode } from '../../../../src/errors.js';
import { errorHandler } from '../../../../src/http/error-handler.js';
import { httpError, toHttpError } from '../../../../src/http/errors/http-error.js';

/** The one error → HTTP mapping (errors/http-error.ts), for every code in the catalogue. */

const CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

/** A real listener whose route throws the error its path names, answered by the app's error handler. */
async function throwingApp(): Promise<string> {
  const app = Fastify();
  app.setErrorHandler(errorHandler);
  app.get<{ Params: { code: ErrorCode } }>('/throw/:code', (request) => {
    throw new SwitchboardError(request.params.code, `thrown: ${request.params.code}`);
  });
  app.get('/unknown', () => {
    throw new Error('a secret detail of a bug');
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  onTestFinished(() => app.close());
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

describe('SwitchboardError → HTTP', () => {
  it.each(CODES)('%s: the catalogue status and {error: {code, message}}', (code) => {
    const { status, message } = ERROR_CATALOGUE[code];
    expect(httpError(code)).toEqual({ status, code, message });
    expect(toHttpError(new SwitchboardError(code))).toEqual({ status, code, message });
    expect(toHttpError(new SwitchboardError(code, 'why, precisely'))).toEqual({ status, code, message: 'why, precisely' });
  });

  it('answers every code over real HTTP with its status, JSON content type and body', async () => {
    const url = await throwingApp();
    for (const code of CODES) {
      const res = await fetch(`${url}/throw/${code}`);
      expect(res.status, code).toBe(ERROR_CATALOGUE[code].status);
      expect(res.headers.get('content-type'), code).toBe('application/json; charset=utf-8');
      expect(await res.json(), code).toEqual({ error: { code, message: `thrown: ${code}` } });
    }
  });

  it('answers an unknown error as 500 INTERNAL_ERROR without its message', async () => {
    const url = await throwingApp();
    const res = await fetch(`${url}/unknown`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: 'INTERNAL_ERROR', message: ERROR_CATALOGUE.INTERNAL_ERROR.message } });
  });

  it('maps bad input (zod, fastify client errors) to 400 VALIDATION_FAILED naming the field', () => {
    const zod = z.object({ arguments: z.object({}) }).safeParse({ arguments: 1 });
    expect(toHttpError(zod.error)).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', message: expect.stringMatching(/^arguments: /) });
    expect(toHttpError(Object.assign(new Error('x'), { code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }))).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect(toHttpError(Object.assign(new Error('bad framing'), { statusCode: 400 }))).toEqual({ status: 400, code: 'VALIDATION_FAILED', message: 'bad framing' });
  });
});
