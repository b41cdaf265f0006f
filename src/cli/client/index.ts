import type { CommandIo } from './command.js';
import { runApprovals, runApprove, runDeny } from './approvals.js';
import { runCall } from './call.js';
import { runDisconnect } from './disconnect.js';
import { runLogin, runLogout } from './login.js';
import { runReload } from './reload.js';
import { runStatus } from './status.js';
import { runTools } from './tools.js';

export type { CommandIo, Output } from './command.js';
export { runApprovals, runApprove, runDeny, runCall, runDisconnect, runLogin, runLogout, runReload, runStatus, runTools };

/** The commands that talk to a running daemon, by name, for the dispatcher. */
export const CLIENT_COMMANDS: Readonly<Record<string, (io: CommandIo) => Promise<number>>> = {
  status: runStatus,
  tools: runTools,
  call: runCall,
  reload: runReload,
  disconnect: runDisconnect,
  login: runLogin,
  logout: runLogout,
  approvals: runApprovals,
  approve: runApprove,
  deny: runDeny,
};
