import { join } from 'node:path';
import { standardDialect } from '../dialects.js';
import { createFileProvider } from './file-provider.js';
import { topLevelTable } from './tables.js';

/** `.mcp.json` (Claude Code's project file) and plain `mcp.json` in the working directory. */
export const projectMcpJsonProvider = createFileProvider({
  id: 'project',
  displayName: 'Project',
  priority: 90,
  files: ({ cwd }) =>
    ['.mcp.json', 'mcp.json'].map((file) => ({
      path: join(cwd, file),
      format: 'json' as const,
      dialect: standardDialect,
      tables: topLevelTable('mcpServers', 'project'),
    })),
});
