/**
 * `switchboard <command> --help`: for every command its usage, what it does, every flag and an
 * example. The usage line is also what a usage error points to.
 */
export interface CommandHelp {
  usage: string;
  description: string;
  options: ReadonlyArray<readonly [flag: string, text: string]>;
  examples: readonly string[];
}

const CONNECTION: ReadonlyArray<readonly [string, string]> = [
  ['--url URL', 'the daemon (default: $SWITCHBOARD_URL, else http://127.0.0.1:7337)'],
  ['--token TOKEN', 'bearer token (default: $SWITCHBOARD_TOKEN)'],
];
const JSON_FLAG = ['--json', "print the daemon's JSON answer as it is"] as const;
const HELP_FLAG = ['-h, --help', 'show this help'] as const;

export const HELP: Readonly<Record<string, CommandHelp>> = {
  serve: {
    usage: 'switchboard serve [--config FILE] [--host HOST] [--port PORT] [--cwd DIR] [--no-project-config] [--insecure] [--log-format auto|pretty|json]',
    description:
      'Run the daemon: discover the MCP servers configured on this machine, connect to all of them, and serve their tools over HTTP (REST, /events, /mcp). Config file edits are applied live. Stops cleanly on Ctrl-C, SIGTERM or SIGHUP.',
    options: [
      ['--config FILE', "Switchboard's own config file (default: $SWITCHBOARD_CONFIG, else ~/.config/switchboard/config.json)"],
      ['--host HOST', 'address to bind (default 127.0.0.1; anything else needs a token or --insecure)'],
      ['--port PORT', 'port to bind (default 7337; 0 picks a free one)'],
      ['--cwd DIR', 'project directory whose project-level files are read (default: the current directory)'],
      ['--no-project-config', 'ignore project-level files (.mcp.json, .cursor/, .vscode/, …)'],
      ['--insecure', 'allow a non-loopback host without a token'],
      ['--log-format FORMAT', 'auto (default: pretty on a terminal, JSON when piped), pretty or json'],
      HELP_FLAG,
    ],
    examples: ['switchboard serve', 'switchboard serve --port 8080 --log-format json > switchboard.log'],
  },
  discover: {
    usage: 'switchboard discover [--cwd DIR] [--config FILE] [--no-project-config] [--json]',
    description:
      'Print every MCP server configured on this machine for a project, where it came from and what Switchboard would do with it (active, shadowed, skipped, disabled, filtered or invalid), without connecting to any of them. Env and header values are masked.',
    options: [
      ['--cwd DIR', 'project directory (default: the current directory)'],
      ['--config FILE', "Switchboard's own config file (default: $SWITCHBOARD_CONFIG, else ~/.config/switchboard/config.json)"],
      ['--no-project-config', 'ignore project-level files, as enableProjectConfig: false'],
      ['--json', 'machine-readable output'],
      HELP_FLAG,
    ],
    examples: ['switchboard discover', 'switchboard discover --cwd ~/src/app --json'],
  },
  status: {
    usage: 'switchboard status [server] [--url URL] [--token TOKEN] [--json]',
    description:
      "Show the running daemon's state, one row per server, then errors and discovery warnings. With a server: that server in detail, with its held tools (changed since they were served) and what changed.",
    options: [...CONNECTION, JSON_FLAG, HELP_FLAG],
    examples: ['switchboard status', 'switchboard status github', 'switchboard status --json | jq .servers'],
  },
  tools: {
    usage: 'switchboard tools [--server SERVER] [-q QUERY | --search TEXT [--limit N]] [--url URL] [--token TOKEN] [--json] | switchboard tools approve <server> [<tool>…|--all]',
    description:
      'List the tools of the running daemon, optionally of one server or matching a search text; with --search, the best matches for what a tool should do, ranked. `tools approve` serves the new definition of tools held because they changed since they were served (see `switchboard status <server>`).',
    options: [
      ['-s, --server SERVER', "only this server's tools"],
      ['-q, --query QUERY', 'only tools whose name or description contains QUERY'],
      ['--search TEXT', 'the tools best matching TEXT in plain words, best first, with a score; then the other likely tools, by server'],
      ['-n, --limit N', '(with --search) the most hits, 1–50 (default 10)'],
      ['--all', '(approve) every held tool of the server'],
      ...CONNECTION,
      JSON_FLAG,
      HELP_FLAG,
    ],
    examples: [
      'switchboard tools',
      'switchboard tools --server github -q issue',
      'switchboard tools --search "open a pull request" --limit 5',
      'switchboard tools approve github search_issues',
    ],
  },
  call: {
    usage: 'switchboard call <tool> [json-args | key=value…] [--timeout MS] [--url URL] [--token TOKEN] [--json]',
    description:
      "Call a tool through the running daemon and print its text content (then its structuredContent as JSON). Arguments are one JSON object, or key=value pairs typed by the tool's input schema (numbers, true/false, JSON for objects and arrays; key:=JSON gives any value as JSON). An unknown tool name is answered with the nearest names. Exits 1 when the tool's result is an error. When stderr is a terminal, the tool's progress is shown there as one updating line ([3/10] step 3) while the call runs; piped or redirected output is unchanged.",
    options: [['--timeout MS', "deadline of the call (default: the server's callTimeout)"], ...CONNECTION, JSON_FLAG, HELP_FLAG],
    examples: [
      'switchboard call mcp_echo_echo \'{"text":"hi"}\'',
      'switchboard call mcp_echo_add a=2 b=3',
      'switchboard call mcp_github_search_issues \'{"q":"bug"}\' --timeout 10000 --json',
    ],
  },
  reload: {
    usage: 'switchboard reload [server] [--force] [--url URL] [--token TOKEN] [--json]',
    description:
      'Without a server: read the config again and apply it (added servers connect, removed ones stop, changed ones reconnect, unchanged ones keep running; --force restarts every server). With a server: reconnect just that one.',
    options: [['--force', 'disconnect every server and connect everything again'], ...CONNECTION, JSON_FLAG, HELP_FLAG],
    examples: ['switchboard reload', 'switchboard reload github'],
  },
  disconnect: {
    usage: 'switchboard disconnect <server> [--url URL] [--token TOKEN] [--json]',
    description: 'Disconnect one server and drop its tools until it is reloaded (or the daemon restarts).',
    options: [...CONNECTION, JSON_FLAG, HELP_FLAG],
    examples: ['switchboard disconnect github'],
  },
  approvals: {
    usage: 'switchboard approvals [--url URL] [--token TOKEN] [--json]',
    description:
      "List the tool calls waiting for an operator's approval (tools in a server's requireApproval list): id, tool, server, agent, in a cluster the replica holding the call, when the wait ends, the policy rule that asked, and the call's arguments (with audit.arguments on; else the digest the approval is bound to).",
    options: [...CONNECTION, JSON_FLAG, HELP_FLAG],
    examples: ['switchboard approvals', 'switchboard approvals --json | jq ".approvals[].arguments"'],
  },
  approve: {
    usage: 'switchboard approve <id> [--for DURATION] [--url URL] [--token TOKEN] [--json]',
    description:
      'Approve a held tool call (the id from switchboard approvals): that call goes ahead and its result reaches the agent. With --for, identical calls (same agent, tool and arguments) also pass without approval for that long.',
    options: [['--for DURATION', 'approve the same call for 90m, 1h, 7d… (at most 7d)'], ...CONNECTION, JSON_FLAG, HELP_FLAG],
    examples: ['switchboard approve 0f8c2b1e-4c1d-4c3a-9a57-2f1e5d6b7a90', 'switchboard approve 0f8c2b1e-4c1d-4c3a-9a57-2f1e5d6b7a90 --for 1h'],
  },
  deny: {
    usage: 'switchboard deny <id> [--url URL] [--token TOKEN] [--json]',
    description: 'Deny a held tool call (the id from switchboard approvals): the call does not run; the agent gets APPROVAL_DENIED.',
    options: [...CONNECTION, JSON_FLAG, HELP_FLAG],
    examples: ['switchboard deny 0f8c2b1e-4c1d-4c3a-9a57-2f1e5d6b7a90'],
  },
  logs: {
    usage: 'switchboard logs <server> [-n LINES] [--follow] [--url URL] [--token TOKEN]',
    description:
      'Print what a server wrote to stderr and the log messages it sent (the last 200 lines the daemon keeps); with --follow, keep printing new lines as they arrive until Ctrl-C.',
    options: [
      ['-n, --lines LINES', 'print only the last LINES lines of the history'],
      ['-f, --follow', 'keep printing new lines (over the /events feed)'],
      ...CONNECTION,
      HELP_FLAG,
    ],
    examples: ['switchboard logs github', 'switchboard logs github -n 20 --follow'],
  },
  audit: {
    usage: 'switchboard audit [--agent NAME] [--server NAME] [--tool NAME] [--outcome OUTCOME] [--since TIME] [-n LIMIT] [--follow] [--url URL] [--token TOKEN] [--json]',
    description:
      'Print the audit log: every tool call, prompt get and resource read (time, agent, transport, server, name, outcome and code, duration, argument and result sizes), oldest of the newest LIMIT first; with --follow, keep printing new ones as they finish until Ctrl-C.',
    options: [
      ['--agent NAME', "only this agent's requests"],
      ['--server NAME', 'only requests to this server'],
      ['--tool NAME', 'only this tool or prompt name, or resource URI'],
      ['--outcome OUTCOME', 'ok, error, not_found, denied, timeout or cancelled'],
      ['--since TIME', 'only entries from this ISO time on'],
      ['-n, --limit LIMIT', 'at most this many past entries (default 100, at most 1000)'],
      ['-f, --follow', 'keep printing new entries (over the /events feed)'],
      ...CONNECTION,
      JSON_FLAG,
      HELP_FLAG,
    ],
    examples: ['switchboard audit --server github -n 20', 'switchboard audit --outcome error --follow'],
  },
  login: {
    usage: 'switchboard login <server> [--url URL] [--token TOKEN] [--no-browser] [--timeout SECONDS]',
    description:
      'Sign in to a server that needs OAuth (status needs_auth): print the authorization URL (and open it when a browser is at hand), then wait until the server connects with the new tokens.',
    options: [['--no-browser', 'only print the URL'], ['--timeout SECONDS', 'how long to wait for the sign-in to finish (default 300)'], ...CONNECTION, HELP_FLAG],
    examples: ['switchboard login linear', 'switchboard login linear --no-browser'],
  },
  agents: {
    usage:
      'switchboard agents add <name> [--servers GLOBS] [--tools GLOBS] [--exclude GLOBS] [--access read|write|all] [--catalogue full|search|auto] [--expires 30d] | list | show <name> | rotate <name> | revoke <name> [--url URL] [--token TOKEN] [--json]',
    description:
      "Manage agents, each with its own key and view of the tools. add prints the new key once (only a salted hash is kept); rotate prints a new one and the old one stops working at once; revoke makes its keys answer KEY_REVOKED. Needs the operator key: the config's token, or on this machine the operator.key file a daemon without a token writes beside its database.",
    options: [
      ['--servers GLOBS', 'servers the agent may use (comma-separated or repeated; default: all)'],
      ['--tools GLOBS', 'tools the agent may see, by exposed name (default: all of its servers)'],
      ['--exclude GLOBS', 'tools hidden from the agent'],
      ['--access LEVEL', 'read, write or all (default all)'],
      ['--catalogue MODE', "how /mcp lists tools to it: full, search or auto (default: the daemon's); full for clients that only call listed names"],
      ['--expires WHEN', 'when its keys stop working: 30d, 12h, 90m, 2w or an ISO date'],
      ...CONNECTION,
      JSON_FLAG,
      HELP_FLAG,
    ],
    examples: ['switchboard agents add ci --servers github --access read --expires 30d', 'switchboard agents rotate ci'],
  },
  service: {
    usage: 'switchboard service print|install|uninstall [--platform systemd|launchd] [--force] [-- SERVE-FLAGS…]',
    description:
      'Run the daemon as a per-user service that starts at login: a systemd user unit on Linux (~/.config/systemd/user/switchboard.service, the log in the journal) or a launchd agent on macOS (~/Library/LaunchAgents/dev.switchboard.daemon.plist, the log in ~/Library/Logs/switchboard/). print shows the file; install writes it and prints the commands that start it; uninstall removes it. Flags after -- go to switchboard serve.',
    options: [['--platform NAME', 'systemd or launchd (default: systemd on Linux, launchd on macOS)'], ['--force', '(install) replace an existing file'], HELP_FLAG],
    examples: ['switchboard service install', 'switchboard service print --platform launchd', 'switchboard service install --force -- --config ~/switchboard.json --port 8080'],
  },
  logout: {
    usage: 'switchboard logout <server> [--url URL] [--token TOKEN] [--json]',
    description: "Forget a server's OAuth tokens (revoking them where the authorization server allows it); the server then waits for a new sign-in.",
    options: [...CONNECTION, JSON_FLAG, HELP_FLAG],
    examples: ['switchboard logout linear'],
  },
};

/** The full help of `command`, ready to print. */
export function renderHelp(command: string): string {
  const help = HELP[command];
  if (!help) return '';
  const width = Math.max(...help.options.map(([flag]) => flag.length));
  return [
    `usage: ${help.usage}`,
    '',
    wrap(help.description, 96),
    '',
    'Options:',
    ...help.options.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`),
    '',
    help.examples.length === 1 ? 'Example:' : 'Examples:',
    ...help.examples.map((example) => `  ${example}`),
    '',
  ].join('\n');
}

/** The one-line usage of `command`, for usage errors. */
export function usageOf(command: string): string {
  return `usage: ${HELP[command]?.usage ?? `switchboard ${command}`}`;
}

function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines.join('\n');
}
