import { join, resolve } from 'node:path';
import { standardDialect } from '../dialects.js';
import { isPlainObject } from '../expand-vars.js';
import { createFileProvider, type ServerTable } from './file-provider.js';
import { topLevelTable } from './tables.js';

/**
 * Claude Code keeps user servers in `~/.claude.json` `mcpServers` and per-project ("local
 * scope") servers under `projects[<absolute project dir>].mcpServers` of the same file; a
 * project may also carry `.claude/mcp.json`. Local scope comes first, as in Claude Code.
 */
export const claudeCodeProvider = createFileProvider({
  id: 'claude-code',
  displayName: 'Claude Code',
  priority: 80,
  files: ({ home, cwd, platform }) => [
    {
      path: join(home, '.claude.json'),
      format: 'json',
      dialect: standardDialect,
      tables: (doc): ServerTable[] => {
        const key = findProjectKey(doc.projects, cwd, platform);
        const project = key === undefined ? undefined : (doc.projects as Record<string, unknown>)[key];
        return [
          {
            level: 'project',
            name: `projects[${JSON.stringify(key ?? cwd)}].mcpServers`,
            table: isPlainObject(project) ? project.mcpServers : undefined,
          },
          { level: 'user', name: 'mcpServers', table: doc.mcpServers },
        ];
      },
    },
    {
      path: join(cwd, '.claude', 'mcp.json'),
      format: 'json',
      dialect: standardDialect,
      tables: topLevelTable('mcpServers', 'project'),
    },
  ],
});

/**
 * The key of `projects` naming `cwd`. Claude Code writes the directory as it saw it; compare
 * resolved paths without trailing separators (and case-insensitively with `/` on Windows).
 */
function findProjectKey(projects: unknown, cwd: string, platform: NodeJS.Platform): string | undefined {
  if (!isPlainObject(projects)) return undefined;
  const norm = (p: string): string => {
    const s = resolve(p).replace(/\\/g, '/').replace(/\/+$/, '');
    return platform === 'win32' ? s.toLowerCase() : s;
  };
  const want = norm(cwd);
  return Object.keys(projects).find((key) => norm(key) === want);
}
