import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemdQuote } from '../../src/cli/service-units.js';
import { CLI_BUNDLE } from '../helpers/build-fixtures.js';
import { runCli, type CliRun } from '../helpers/cli-run.js';
import { tempDir } from '../helpers/process.js';

/**
 * Issue #25, item 2: `switchboard service` writes a systemd user unit and a launchd agent that
 * run the daemon, checked as their own tools read them where those tools exist here.
 */

function cli(args: string[], dirs: { home: string; cwd: string }): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dirs.home, PATH: '/opt/tools/bin:/usr/bin:/bin' };
  delete env.XDG_CONFIG_HOME;
  return runCli(['service', ...args], { env, cwd: dirs.cwd });
}

function hasCommand(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

const TIMEOUT_MS = 60_000;

describe('switchboard service', () => {
  it(
    'installs a systemd user unit that runs serve with the journal as its log, and systemd-analyze accepts it',
    async () => {
      const home = await tempDir();
      const run = await cli(['install', '--platform', 'systemd', '--', '--config', 'sb.json', '--port', '8080'], { home, cwd: home });
      const path = join(home, '.config/systemd/user/switchboard.service');
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toContain(`wrote ${path}\n`);
      expect(run.stdout).toContain('systemctl --user daemon-reload && systemctl --user enable --now switchboard');
      expect(run.stdout).toContain('journalctl --user -u switchboard -f');

      const unit = readFileSync(path, 'utf8');
      // Absolute node and script (a service has no login PATH), serve's flags after ours, --config made absolute.
      const script = realpathSync(CLI_BUNDLE);
      expect(unit).toContain(`\nExecStart=${systemdQuote(process.execPath)} ${systemdQuote(script)} serve --log-format json --config ${join(home, 'sb.json')} --port 8080\n`);
      for (const line of ['Type=exec', 'StandardOutput=journal', 'StandardError=journal', 'KillMode=mixed', 'Restart=on-failure', 'WantedBy=default.target']) {
        expect(unit).toContain(`\n${line}\n`);
      }
      expect(unit).toContain(`\nWorkingDirectory=${home}\n`);
      expect(unit).toContain('\nEnvironment=PATH=/opt/tools/bin:/usr/bin:/bin\n');

      // An existing unit is kept unless asked.
      const again = await cli(['install', '--platform', 'systemd'], { home, cwd: home });
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('--force replaces it');
      expect((await cli(['install', '--platform', 'systemd', '--force'], { home, cwd: home })).code).toBe(0);
      expect(readFileSync(path, 'utf8')).not.toContain('--port 8080');

      // The unit as systemd itself parses it. Only this check needs the binary; without it, it is skipped.
      if (hasCommand('systemd-analyze')) {
        const verify = spawnSync('systemd-analyze', ['verify', path], { encoding: 'utf8' });
        expect(verify.status, verify.stderr).toBe(0);
        // A bad key or value is only a warning on stderr, with the file's name and line.
        expect(verify.stderr.split('\n').filter((line) => line.includes('switchboard.service'))).toEqual([]);
      }

      const removed = await cli(['uninstall', '--platform', 'systemd'], { home, cwd: home });
      expect(removed.code).toBe(0);
      expect(removed.stdout).toContain('systemctl --user disable --now switchboard');
      expect(existsSync(path)).toBe(false);
    },
    TIMEOUT_MS,
  );

  it(
    'installs a launchd agent with its log in ~/Library/Logs, a valid property list',
    async () => {
      const home = await tempDir();
      const run = await cli(['install', '--platform', 'launchd'], { home, cwd: home });
      expect(run.code).toBe(0);
      const path = join(home, 'Library/LaunchAgents/dev.switchboard.daemon.plist');
      expect(run.stdout).toContain(`launchctl bootstrap gui/$(id -u) ${path}`);
      const log = join(home, 'Library/Logs/switchboard/switchboard.log');
      // launchd does not create the log's directory itself.
      expect(statSync(join(home, 'Library/Logs/switchboard')).isDirectory()).toBe(true);

      const plist = readFileSync(path, 'utf8');
      expect((await cli(['print', '--platform', 'launchd'], { home, cwd: home })).stdout).toBe(plist);
      // Read with a real property-list parser where one is at hand (Python's plistlib); skipped otherwise.
      if (hasCommand('python3')) {
        const json = execFileSync('python3', ['-c', 'import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], "rb"))))', path], { encoding: 'utf8' });
        expect(JSON.parse(json)).toEqual({
          Label: 'dev.switchboard.daemon',
          ProgramArguments: [process.execPath, realpathSync(CLI_BUNDLE), 'serve', '--log-format', 'json'],
          WorkingDirectory: home,
          EnvironmentVariables: { PATH: '/opt/tools/bin:/usr/bin:/bin' },
          RunAtLoad: true,
          KeepAlive: { SuccessfulExit: false },
          ThrottleInterval: 5,
          ExitTimeOut: 30,
          ProcessType: 'Background',
          StandardOutPath: log,
          StandardErrorPath: log,
        });
      }
    },
    TIMEOUT_MS,
  );

  it(
    "the unit's ExecStart runs the daemon: JSON log lines, and it stops cleanly on systemd's SIGTERM",
    async () => {
      const home = await tempDir();
      const unit = (await cli(['print', '--platform', 'systemd', '--', '--port', '0'], { home, cwd: home })).stdout;
      const words = /^ExecStart=(.*)$/m.exec(unit)![1]!.split(' ');
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
      for (const name of ['SWITCHBOARD_CONFIG', 'SWITCHBOARD_TOKEN', 'XDG_STATE_HOME', 'XDG_CONFIG_HOME']) delete env[name];
      const daemon = spawn(words[0]!, words.slice(1), { cwd: /^WorkingDirectory=(.*)$/m.exec(unit)![1], env, stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = once(daemon, 'close');
      let out = '';
      const listening = new Promise<Record<string, unknown>>((resolve) => {
        daemon.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          const line = out.split('\n').find((l) => l.includes('"listening on'));
          if (line) resolve(JSON.parse(line) as Record<string, unknown>);
        });
      });
      try {
        expect((await Promise.race([listening, exited.then((): Record<string, unknown> => ({}))])).url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      } finally {
        daemon.kill('SIGTERM');
      }
      expect(await exited).toEqual([0, null]);
    },
    TIMEOUT_MS,
  );

  it(
    'refuses an unknown action or platform with exit 2',
    async () => {
      const home = await tempDir();
      expect(await cli(['start'], { home, cwd: home })).toMatchObject({ code: 2, stderr: expect.stringMatching(/^switchboard service: unknown action "start"\nusage: /) });
      expect(await cli(['print', '--platform', 'upstart'], { home, cwd: home })).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown --platform "upstart"') });
    },
    TIMEOUT_MS,
  );
});
