import { fixtureServerConfig } from '../../test/helpers/fixtures.js';
import type { ServerConfig } from '../../src/config/types.js';

/** The second echo server of B1, whose calls pass three argument policies (issue #40). */
export const POLICED_PATH = '/tools/mcp_policed_echo/call';

/**
 * Three rules every call to `policed` is evaluated against, none of which applies to the bench's
 * echo text: a prefix check, a size check and a conjunction reading `now`. Each call walks all
 * three and is allowed, the costliest path through the policy stage short of a denial.
 */
export const THREE_RULES = [
  { name: 'no-drop', match: { servers: ['policed'] }, when: 'args.text.startsWith("DROP")', effect: 'deny', reason: 'no DROP' },
  { name: 'not-huge', match: { servers: ['policed'], tools: ['echo'] }, when: 'size(args.text) > 10000', effect: 'deny', reason: 'too long' },
  { name: 'refunds-at-night', match: { servers: ['policed'] }, when: 'args.text.contains("refund") && now.getHours() < 6', effect: 'approve', reason: 'a human must look' },
];

/** The echo server of B1 and a second one, `policed`, that only the policies select. */
export function echoAndPolicedServers(): Record<string, ServerConfig> {
  return { echo: fixtureServerConfig('echo-stdio'), policed: fixtureServerConfig('echo-stdio', { env: { BENCH_INSTANCE: 'policed' } }) };
}
