import { isAbsolute, join } from 'node:path';

/**
 * Per-OS directory where desktop apps (Claude Desktop, VS Code) keep their settings. Only the
 * table entry depends on `platform`; paths are joined with the host's separator, so a test can
 * pick any platform.
 */
export function appConfigDir(platform: NodeJS.Platform, home: string, env: Readonly<Record<string, string | undefined>>): string {
  switch (platform) {
    case 'darwin':
      return join(home, 'Library', 'Application Support');
    case 'win32':
      return env.APPDATA || join(home, 'AppData', 'Roaming');
    default: {
      const xdg = env.XDG_CONFIG_HOME;
      // The XDG spec says a relative value must be ignored.
      return xdg && isAbsolute(xdg) ? xdg : join(home, '.config');
    }
  }
}
