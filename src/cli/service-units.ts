import { join } from 'node:path';

/**
 * The files that run `switchboard serve` as a per-user service: a systemd user unit (Linux; the
 * log goes to the journal) and a launchd agent (macOS; the log goes to a file, launchd has no
 * journal). Pure functions of `ServiceSpec`, so a test can check them without installing them.
 */

export type ServiceManager = 'systemd' | 'launchd';

export interface ServiceSpec {
  /** The Node.js binary, absolute: a service does not get the login shell's PATH to find `node`. */
  node: string;
  /** The CLI script, absolute (`…/dist/cli.js`), resolved through npm's bin symlink. */
  script: string;
  /** Arguments after `serve` (`--config FILE`, `--port 8080`, …). */
  serveArgs: readonly string[];
  home: string;
  /**
   * The PATH stdio servers are started with. The installing shell's, so `npx …` and `uvx …`
   * servers resolve as they do in a terminal (a user manager's default PATH lacks nvm's node).
   */
  path: string | undefined;
}

export const SYSTEMD_UNIT_NAME = 'switchboard.service';
export const LAUNCHD_LABEL = 'dev.switchboard.daemon';

/** Where the installed file goes, per manager. */
export function unitPath(manager: ServiceManager, home: string, env: NodeJS.ProcessEnv): string {
  if (manager === 'systemd') return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'systemd', 'user', SYSTEMD_UNIT_NAME);
  return join(home, 'Library', 'LaunchAgents', `${LAUNCHD_LABEL}.plist`);
}

/** The launchd agent's log file (stdout and stderr both). */
export function launchdLogPath(home: string): string {
  return join(home, 'Library', 'Logs', 'switchboard', 'switchboard.log');
}

/** The command line of the service: JSON logs, one line per entry, for the journal or a file. */
function commandLine(spec: ServiceSpec): string[] {
  return [spec.node, spec.script, 'serve', '--log-format', 'json', ...spec.serveArgs];
}

export function renderSystemdUnit(spec: ServiceSpec): string {
  const lines = [
    '# Switchboard as a systemd user service, written by `switchboard service install`.',
    '#   systemctl --user daemon-reload && systemctl --user enable --now switchboard',
    '#   journalctl --user -u switchboard -f',
    '[Unit]',
    'Description=Switchboard MCP aggregator daemon',
    '',
    '[Service]',
    'Type=exec',
    `ExecStart=${commandLine(spec).map(systemdQuote).join(' ')}`,
    `WorkingDirectory=${systemdQuote(spec.home)}`,
    ...(spec.path ? [`Environment=${systemdQuote(`PATH=${spec.path}`)}`] : []),
    'StandardOutput=journal',
    'StandardError=journal',
    'SyslogIdentifier=switchboard',
    // SIGTERM to the daemon alone: it drains calls and stops its servers itself. The default
    // (control-group) would signal the stdio servers at the same moment, cutting calls mid-way.
    'KillMode=mixed',
    'KillSignal=SIGTERM',
    // shutdownGraceMs (10 s by default) plus the servers' own teardown.
    'TimeoutStopSec=30',
    'Restart=on-failure',
    'RestartSec=2',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ];
  return lines.join('\n');
}

export function renderLaunchdPlist(spec: ServiceSpec): string {
  const log = launchdLogPath(spec.home);
  const args = commandLine(spec)
    .map((arg) => `    <string>${xml(arg)}</string>`)
    .join('\n');
  const env = spec.path ? `  <key>EnvironmentVariables</key>\n  <dict>\n    <key>PATH</key>\n    <string>${xml(spec.path)}</string>\n  </dict>\n` : '';
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Switchboard as a launchd agent, written by \`switchboard service install\`.
     launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/${LAUNCHD_LABEL}.plist
     tail -f ~/Library/Logs/switchboard/switchboard.log -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>${LAUNCHD_LABEL}</string>
  <key>ProgramArguments</key>
  <array>
${args}
  </array>
  <key>WorkingDirectory</key>
  <string>${xml(spec.home)}</string>
${env}  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ThrottleInterval</key>
  <integer>5</integer>
  <key>ExitTimeOut</key>
  <integer>30</integer>
  <key>ProcessType</key>
  <string>Background</string>
  <key>StandardOutPath</key>
  <string>${xml(log)}</string>
  <key>StandardErrorPath</key>
  <string>${xml(log)}</string>
</dict>
</plist>
`;
}

/**
 * One word of a unit file: quoted when it holds anything systemd would split or expand.
 * `%` specifiers and `$` variables are doubled so a path keeps them literally.
 */
export function systemdQuote(word: string): string {
  const literal = word.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  if (literal !== '' && !/[\s"'\\;]/.test(literal)) return literal;
  return `"${literal.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
