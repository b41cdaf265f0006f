import { PACKAGE_VERSION } from '../http/package-info.js';
import { EXIT_OK, EXIT_USAGE, type CliContext } from './context.js';
import { HELP, renderHelp } from './help.js';
import { holdLeanStart } from './lean-start.js';

export interface CliCommand {
  /** One line for the top-level usage. */
  summary: string;
  /** Loaded on demand, so `discover` does not pay for what `serve` imports. */
  load(): Promise<(ctx: CliContext) => Promise<number>>;
}

/** Every subcommand. */
export const COMMANDS: Readonly<Record<string, CliCommand>> = {
  discover: {
    summary: 'show every configured MCP server and what Switchboard would do with it',
    load: async () => (await import('./discover.js')).runDiscover,
  },
  serve: {
    summary: 'run the daemon: connect every server and serve their tools over HTTP',
    load: async () => {
      // Before the daemon's modules are evaluated (lean-start.ts: what only the start needs, given back at ready).
      holdLeanStart();
      return (await import('./serve.js')).runServeCli;
    },
  },
  status: {
    summary: "show the running daemon's state, servers and errors",
    load: async () => (await import('./client/status.js')).runStatus,
  },
  tools: {
    summary: 'list the tools of the running daemon',
    load: async () => (await import('./client/tools.js')).runTools,
  },
  call: {
    summary: 'call a tool through the running daemon',
    load: async () => (await import('./client/call.js')).runCall,
  },
  reload: {
    summary: 'reload every server, or one',
    load: async () => (await import('./client/reload.js')).runReload,
  },
  disconnect: {
    summary: 'disconnect one server and drop its tools',
    load: async () => (await import('./client/disconnect.js')).runDisconnect,
  },
  approvals: {
    summary: "list the tool calls waiting for an operator's approval",
    load: async () => (await import('./client/approvals.js')).runApprovals,
  },
  approve: {
    summary: 'approve a held tool call',
    load: async () => (await import('./client/approvals.js')).runApprove,
  },
  deny: {
    summary: 'deny a held tool call',
    load: async () => (await import('./client/approvals.js')).runDeny,
  },
  logs: {
    summary: "print a server's stderr and log messages, or follow them",
    load: async () => (await import('./client/logs.js')).runLogs,
  },
  audit: {
    summary: 'print the audit log of calls, prompt gets and resource reads, or follow it',
    load: async () => (await import('./client/audit.js')).runAudit,
  },
  login: {
    summary: 'sign in to a server that needs OAuth (prints the URL, waits for the browser)',
    load: async () => (await import('./client/login.js')).runLogin,
  },
  agents: {
    summary: 'add, list, show, rotate or revoke agents and their keys',
    load: async () => (await import('./client/agents.js')).runAgents,
  },
  service: {
    summary: 'print or install a systemd user unit / launchd agent that runs the daemon at login',
    load: async () => (await import('./service.js')).runService,
  },
  logout: {
    summary: "forget a server's OAuth tokens",
    load: async () => (await import('./client/login.js')).runLogout,
  },
};

export function usage(commands: Readonly<Record<string, CliCommand>> = COMMANDS): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    'usage: switchboard <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run "switchboard <command> --help" for its options and an example,',
    '"switchboard --version" for the version.',
    '',
  ].join('\n');
}

/**
 * Picks the subcommand from `ctx.argv` (the arguments after the program name) and runs it with
 * the rest. Returns the exit code: 0 for `--help` / `--version`, 2 for a missing or unknown
 * command (one line: a typo should not scroll the screen).
 */
export async function runCli(ctx: CliContext, commands: Readonly<Record<string, CliCommand>> = COMMANDS): Promise<number> {
  const [name, ...rest] = ctx.argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    ctx.stdout.write(`switchboard ${PACKAGE_VERSION}\n`);
    return EXIT_OK;
  }
  if (name === 'help' && rest[0] !== undefined && Object.hasOwn(HELP, rest[0])) {
    ctx.stdout.write(renderHelp(rest[0]));
    return EXIT_OK;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    ctx.stdout.write(usage(commands));
    return EXIT_OK;
  }
  if (name === undefined) {
    ctx.stderr.write(usage(commands));
    return EXIT_USAGE;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) {
    ctx.stderr.write(`switchboard: unknown command "${name}" (commands: ${Object.keys(commands).join(', ')})\n`);
    return EXIT_USAGE;
  }
  const run = await command.load();
  return run({ ...ctx, argv: rest });
}
