import { join } from 'node:path';
import { windsurfDialect } from '../dialects.js';
import { createFileProvider } from './file-provider.js';
import { topLevelTable } from './tables.js';

/** Windsurf has a single user file; remote servers use `serverUrl`. */
export const windsurfProvider = createFileProvider({
  id: 'windsurf',
  displayName: 'Windsurf',
  priority: 40,
  files: ({ home }) => [
    {
      path: join(home, '.codeium', 'windsurf', 'mcp_config.json'),
      format: 'json',
      dialect: windsurfDialect,
      tables: topLevelTable('mcpServers', 'user'),
    },
  ],
});
