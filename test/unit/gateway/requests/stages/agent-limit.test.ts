import { describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../../../../src/errors.js';
import { compose, contextOf } from '../../../../../src/gateway/requests/pipeline.js';
import { agentLimit } from '../../../../../src/gateway/requests/stages/agent-limit.js';

function limited(refuse = false) {
  const taken: string[] = [];
  let held = 0;
  const stage = agentLimit({
    enter: (agent) => {
      if (refuse) throw new SwitchboardError('AGENT_BUSY', 'busy', { retryAfterMs: 1_000 });
      taken.push(agent.name);
      held += 1;
      return { release: () => void (held -= 1) };
    },
  });
  return { stage, taken, held: () => held };
}

describe('agent limit: a slot per request of an agent, for as long as it runs', () => {
  it("takes the agent's slot and gives it back when the request ends, answered or failed", async () => {
    const { stage, taken, held } = limited();
    let heldDuring = -1;
    const ok = compose([stage], async () => {
      heldDuring = held();
      return {};
    });
    await ok(contextOf({ method: 'tools/call', name: 't' }, { transport: 'rest', agent: { name: 'bot' } }));
    expect([taken, heldDuring, held()]).toEqual([['bot'], 1, 0]);
    const failing = compose([stage], () => Promise.reject(new Error('upstream down')));
    await expect(failing(contextOf({ method: 'tools/call', name: 't' }, { transport: 'rest', agent: { name: 'bot' } }))).rejects.toThrow('upstream down');
    expect(held()).toBe(0);
  });

  it('refuses at once when the agent is over its limit: the request never reaches the rest of the path', async () => {
    const { stage } = limited(true);
    let reached = false;
    const run = compose([stage], async () => {
      reached = true;
      return {};
    });
    await expect(run(contextOf({ method: 'tools/call', name: 't' }, { transport: 'mcp', agent: { name: 'bot' } }))).rejects.toMatchObject({ code: 'AGENT_BUSY' });
    expect(reached).toBe(false);
  });

  it("has nothing to say about the operator's requests, nor about an unsubscribe (it only releases)", async () => {
    const { stage, taken } = limited(true);
    const run = compose([stage], async () => ({ through: true }));
    expect(await run(contextOf({ method: 'tools/call', name: 't' }, { transport: 'rest' }))).toEqual({ through: true });
    expect(await run(contextOf({ method: 'resources/unsubscribe', uri: 'file:///a' }, { transport: 'mcp', agent: { name: 'bot' } }))).toEqual({ through: true });
    expect(taken).toEqual([]);
  });
});
