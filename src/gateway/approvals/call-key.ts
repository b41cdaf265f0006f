import { digest } from '../../upstream/catalogue/tool-pins.js';

/**
 * What an approval is bound to (issue #40 item 3): the agent, the tool at its server and a digest
 * of the arguments — sha256 over their canonical JSON (keys sorted, `undefined` members dropped),
 * so `{a:1,b:2}` and `{b:2,a:1}` are the same call and `{a:1}` and `{a:2}` are not.
 */
export interface CallKey {
  /** sha256 hex of the arguments' canonical JSON. */
  argumentsDigest: string;
  /** Agent, server, tool and digest in one string: the key of the grant tables. */
  key: string;
}

export function callKeyOf(agent: string | undefined, server: string, tool: string, args: Record<string, unknown> | undefined): CallKey {
  const argumentsDigest = digest(args ?? {});
  // NUL cannot occur in an agent, server or tool name: the parts cannot run into each other.
  return { argumentsDigest, key: `${agent ?? ''}\0${server}\0${tool}\0${argumentsDigest}` };
}
