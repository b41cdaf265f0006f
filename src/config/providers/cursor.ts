import { join } from 'node:path';
import { standardDialect } from '../dialects.js';
import { createFileProvider } from './file-provider.js';
import { topLevelTable } from './tables.js';

/** Cursor: `.cursor/mcp.json` in the project, `~/.cursor/mcp.json` for the user. */
export const cursorProvider = createFileProvider({
  id: 'cursor',
  displayName: 'Cursor',
  priority: 60,
  files: ({ cwd, home }) => [
    {
      path: join(cwd, '.cursor', 'mcp.json'),
      format: 'json',
      dialect: standardDialect,
      tables: topLevelTable('mcpServers', 'project'),
    },
    {
      path: join(home, '.cursor', 'mcp.json'),
      format: 'json',
      dialect: standardDialect,
      tables: topLevelTable('mcpServers', 'user'),
    },
  ],
});
