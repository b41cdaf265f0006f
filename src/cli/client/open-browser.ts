import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Opens `url` in the person's browser when this machine has one to offer: `open` on macOS,
 * `xdg-open` elsewhere when a display is set. Never required: on a server over SSH nothing is
 * found, nothing is started, and the printed URL is the way in. Returns whether it tried.
 */
export function openInBrowser(url: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): boolean {
  const command = platform === 'darwin' ? 'open' : platform === 'win32' ? undefined : 'xdg-open';
  if (!command || !onPath(command, env)) return false;
  if (platform !== 'darwin' && !env.DISPLAY && !env.WAYLAND_DISPLAY) return false;
  try {
    const child = spawn(command, [url], { detached: true, stdio: 'ignore', env });
    // A launcher that fails tells nobody: the URL is printed anyway.
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

function onPath(command: string, env: NodeJS.ProcessEnv): boolean {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      // Not in this directory.
    }
  }
  return false;
}
