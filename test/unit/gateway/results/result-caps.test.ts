import { describe, expect, it } from 'vitest';
import { ResultCaps } from '../../../../src/gateway/results/result-caps.js';

const caps = new ResultCaps(
  { maxResultTokens: 25_000, tools: { 'mcp_logs_*': 5_000, 'mcp_*_dump': 0 } },
  {
    serverOf: (tool) => (tool.startsWith('mcp_big_') ? 'big' : tool.startsWith('mcp_logs_') ? 'logs' : undefined),
    serverCap: (server) => (server === 'big' ? 50_000 : undefined),
    agentCap: (agent) => (agent === 'narrow' ? 2_000 : undefined),
  },
);

describe("which maxResultTokens applies: the agent's, then a tool glob, then the server's, then the daemon's", () => {
  it.each([
    ["the daemon's", 'mcp_other_tool', undefined, 25_000],
    ["the server's", 'mcp_big_read', undefined, 50_000],
    ["a tool glob over the server's", 'mcp_logs_tail', undefined, 5_000],
    ['a tool glob turning it off', 'mcp_big_dump', undefined, 0],
    ["the agent's over everything", 'mcp_big_dump', 'narrow', 2_000],
    ["a read: the agent's, else the daemon's", undefined, undefined, 25_000],
  ])('%s', (_what, tool, agent, cap) => {
    expect(caps.capOf(tool, agent ? { name: agent } : undefined)).toBe(cap);
  });

  it('defaults to 25 000', () => {
    expect(new ResultCaps({}, { serverOf: () => undefined, serverCap: () => undefined, agentCap: () => undefined }).capOf('t', undefined)).toBe(25_000);
  });
});
