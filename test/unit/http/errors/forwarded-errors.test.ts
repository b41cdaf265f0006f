import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../../../src/errors.js';
import { toForwardedError } from '../../../../src/http/errors/forwarded-error.js';
import { loadSdk } from '../../../../src/upstream/sdk.js';

// The daemon loads the SDK client with its first connection (src/upstream/sdk.ts); here the
// functions under test meet the SDK's values without one.
beforeAll(() => loadSdk());

/** A server's answer to a forwarded prompts/get or resources/read becomes one of our codes, its message kept. */
describe('toForwardedError', () => {
  it('keeps our own errors as they are', () => {
    const own = new SwitchboardError('UPSTREAM_TIMEOUT', 'resources/read timed out after 5 ms');
    expect(toForwardedError(own)).toBe(own);
  });

  it('maps a resource miss (either code) to 404 RESOURCE_NOT_FOUND', () => {
    for (const err of [new ResourceNotFoundError('x://y'), new ProtocolError(ProtocolErrorCode.ResourceNotFound, 'gone')]) {
      const mapped = toForwardedError(err) as SwitchboardError;
      expect(mapped).toMatchObject({ code: 'RESOURCE_NOT_FOUND', status: 404, cause: err });
      expect(mapped.message).toContain(err.message);
    }
  });

  it('maps invalid params to 400 VALIDATION_FAILED and any other server error to 502 UPSTREAM_ERROR', () => {
    const invalid = new ProtocolError(ProtocolErrorCode.InvalidParams, 'name is required');
    expect(toForwardedError(invalid)).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, message: `The MCP server answered: ${invalid.message}` });
    const internal = new ProtocolError(ProtocolErrorCode.InternalError, 'boom');
    expect(toForwardedError(internal)).toMatchObject({ code: 'UPSTREAM_ERROR', status: 502, cause: internal });
    const sdk = new SdkError(SdkErrorCode.InvalidResult, 'not a result');
    expect(toForwardedError(sdk)).toMatchObject({ code: 'UPSTREAM_ERROR', status: 502 });
  });
});
