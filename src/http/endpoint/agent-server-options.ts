import type { RequestId } from '@modelcontextprotocol/server';
import type { MCPManager } from '../../upstream/manager.js';
import type { SwitchboardRuntime } from '../../runtime/runtime.js';
import type { Gateway } from '../../gateway/index.js';
import type { SessionState } from './agent-channel.js';
import type { CatalogueModes } from '../../gateway/index.js';
import type { Continuations } from './continuations.js';
import type { McpLists } from '../../gateway/index.js';
import type { RelayStates } from './relay-state.js';

/** What `/mcp` needs of the manager. */
export type AgentSource = Pick<MCPManager, 'getCatalogue' | 'getPrompts' | 'getResources' | 'identity' | 'instanceAd' | 'listHints' | 'capabilities' | 'toolSearch'>;

export interface AgentServerOptions {
  manager: AgentSource;
  runtime: Pick<SwitchboardRuntime, 'state' | 'whenReady'>;
  lists: McpLists;
  /** Which tool list each caller gets (full, or search mode's meta-tools), and the meta-tools' lookups. */
  modes: CatalogueModes;
  gateway: Gateway;
  continuations: Continuations;
  relayStates: RelayStates;
  /**
   * The 2025-era session this server serves (its agent is the caller); absent for the 2026-07-28
   * servers, whose every request carries its own caller (request-agent.ts).
   */
  session?: SessionState;
  /**
   * Called after a call the client cancelled has ended. The SDK sends no response for it, so
   * its response stream would stay open until the session ends unless it is closed here.
   */
  onCancelled?: (requestId: RequestId) => void;
}
