import { join } from 'node:path';
import { geminiDialect } from '../dialects.js';
import { createFileProvider } from './file-provider.js';
import { topLevelTable } from './tables.js';

/**
 * Gemini CLI: `settings.json` (comments allowed) in `.gemini/` of the project and the home.
 * Gemini expands `$VAR` as well as `${VAR}` in its settings.
 */
export const geminiProvider = createFileProvider({
  id: 'gemini',
  displayName: 'Gemini CLI',
  priority: 30,
  files: ({ cwd, home }) => [
    {
      path: join(cwd, '.gemini', 'settings.json'),
      format: 'jsonc',
      dialect: geminiDialect,
      tables: topLevelTable('mcpServers', 'project'),
      bareDollar: true,
    },
    {
      path: join(home, '.gemini', 'settings.json'),
      format: 'jsonc',
      dialect: geminiDialect,
      tables: topLevelTable('mcpServers', 'user'),
      bareDollar: true,
    },
  ],
});
