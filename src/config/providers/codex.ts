import { isAbsolute, join } from 'node:path';
import { codexDialect } from '../dialects.js';
import { createFileProvider } from './file-provider.js';
import { topLevelTable } from './tables.js';

/** Codex: `[mcp_servers.<name>]` tables in `$CODEX_HOME/config.toml` (default `~/.codex`). */
export const codexProvider = createFileProvider({
  id: 'codex',
  displayName: 'Codex',
  priority: 20,
  files: ({ home, env }) => {
    const codexHome = env.CODEX_HOME && isAbsolute(env.CODEX_HOME) ? env.CODEX_HOME : join(home, '.codex');
    return [
      {
        path: join(codexHome, 'config.toml'),
        format: 'toml',
        dialect: codexDialect,
        tables: topLevelTable('mcp_servers', 'user'),
      },
    ];
  },
});
