import type { CallToolResult } from '@modelcontextprotocol/client';
import { pino } from 'pino';
import { RequestRouter, type SendOptions } from '../../src/gateway/requests/request-router.js';
import type { MCPManager } from '../../src/upstream/manager.js';

const routers = new WeakMap<MCPManager, RequestRouter>();

/**
 * A tool call by its exposed name, routed as the gateway routes it (`RequestRouter.send`) but
 * without the gateway's other stages: for tests of the upstream side (supervision, eras).
 * Failures are `isError` results, as an agent sees them.
 */
export async function callTool(manager: MCPManager, name: string, args: Record<string, unknown> | undefined, options: SendOptions = {}): Promise<CallToolResult> {
  let router = routers.get(manager);
  if (!router) routers.set(manager, (router = new RequestRouter(manager, pino({ level: 'silent' }))));
  return (await router.send({ method: 'tools/call', name, arguments: args }, options)) as CallToolResult;
}
