import { join } from 'node:path';
import { standardDialect } from '../dialects.js';
import { appConfigDir } from './app-config-dir.js';
import { createFileProvider } from './file-provider.js';
import { topLevelTable } from './tables.js';

/**
 * Claude Desktop has one user file, in the OS settings directory:
 * macOS `~/Library/Application Support/Claude`, Windows `%APPDATA%\Claude`,
 * Linux `$XDG_CONFIG_HOME/Claude` (else `~/.config/Claude`).
 */
export const claudeDesktopProvider = createFileProvider({
  id: 'claude-desktop',
  displayName: 'Claude Desktop',
  priority: 70,
  files: ({ platform, home, env }) => [
    {
      path: join(appConfigDir(platform, home, env), 'Claude', 'claude_desktop_config.json'),
      format: 'json',
      dialect: standardDialect,
      tables: topLevelTable('mcpServers', 'user'),
    },
  ],
});
