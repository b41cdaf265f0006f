import { CLIENT_CAPABILITIES_META_KEY } from '@modelcontextprotocol/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { modernParams, withAnswers } from '../../../../src/upstream/transport/input-required.js';
import type { ServerTraffic } from '../../../../src/upstream/transport/server-traffic.js';
import { APP_MIME_TYPE, UI_EXTENSION } from '../../../../src/upstream/transport/ui-extension.js';
import { loadSdk } from '../../../../src/upstream/sdk.js';

// The daemon loads the SDK client with its first connection (src/upstream/sdk.ts); here the
// functions under test meet the SDK's values without one.
beforeAll(() => loadSdk());

const declared = (params: Record<string, unknown>): unknown => (params._meta as Record<string, unknown>)[CLIENT_CAPABILITIES_META_KEY];

describe('the MCP Apps extension towards a 2026-07-28 server (issue #41)', () => {
  it("an agent's request carries exactly the agent's declaration, the extension included or not", () => {
    const ui = { mimeTypes: [APP_MIME_TYPE] };
    expect(declared(modernParams({}, { capabilities: { extensions: { [UI_EXTENSION]: ui } } }))).toEqual({ extensions: { [UI_EXTENSION]: ui }, roots: {} });
    expect(declared(modernParams({}, { capabilities: { sampling: {} } }))).toEqual({ sampling: {}, roots: {} });
    expect(declared(modernParams({}, {}))).toEqual({ roots: {} });
  });

  it("a request without an agent (a list, a REST call) carries Switchboard's own declaration", () => {
    expect(declared(modernParams({}, undefined))).toEqual({ extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } }, roots: {} });
  });

  it("keeps Switchboard's own declaration on the rounds of a server's questions", async () => {
    const sent: Array<Record<string, unknown>> = [];
    const traffic = { roots: [], answer: async () => ({ roots: [] }) } as unknown as ServerTraffic;
    const send = async (params: Record<string, unknown>): Promise<unknown> => {
      sent.push(params);
      return sent.length === 1 ? { resultType: 'input_required', inputRequests: { r: { method: 'roots/list' } }, requestState: 's' } : { content: [] };
    };
    await withAnswers(send, {}, undefined, traffic, new AbortController().signal);
    expect(sent.map(declared)).toEqual([
      { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } }, roots: {} },
      { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } }, roots: {} },
    ]);
  });
});
