import { join } from 'node:path';
import { vscodeDialect } from '../dialects.js';
import { appConfigDir } from './app-config-dir.js';
import { createFileProvider } from './file-provider.js';
import { topLevelTable } from './tables.js';

/**
 * VS Code: `.vscode/mcp.json` in the workspace and `Code/User/mcp.json` in the OS settings
 * directory; JSONC with a top-level `servers` table. `${workspaceFolder}` and the other editor
 * variables are expanded for every file (see expand-vars.ts); `${input:…}` prompts cannot be
 * answered by a daemon, so an entry that uses one is reported invalid.
 */
export const vscodeProvider = createFileProvider({
  id: 'vscode',
  displayName: 'VS Code',
  priority: 50,
  files: ({ cwd, home, env, platform }) => [
    {
      path: join(cwd, '.vscode', 'mcp.json'),
      format: 'jsonc',
      dialect: vscodeDialect,
      tables: topLevelTable('servers', 'project'),
    },
    {
      path: join(appConfigDir(platform, home, env), 'Code', 'User', 'mcp.json'),
      format: 'jsonc',
      dialect: vscodeDialect,
      tables: topLevelTable('servers', 'user'),
    },
  ],
});
