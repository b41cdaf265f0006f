import { claudeCodeProvider } from './claude-code.js';
import { claudeDesktopProvider } from './claude-desktop.js';
import { codexProvider } from './codex.js';
import { cursorProvider } from './cursor.js';
import { geminiProvider } from './gemini.js';
import { nativeProvider } from './native.js';
import { projectMcpJsonProvider } from './project-mcp-json.js';
import type { ConfigProvider } from './provider.js';
import { vscodeProvider } from './vscode.js';
import { windsurfProvider } from './windsurf.js';

/**
 * Every provider, highest priority first. The order decides which entry wins a name:
 *
 *   100 switchboard     our own file: the operator said so explicitly
 *    90 project         `.mcp.json` / `mcp.json`: the repo's declared servers
 *    80 claude-code     `~/.claude.json` (projects[cwd], then user), `.claude/mcp.json`
 *    70 claude-desktop  `claude_desktop_config.json`
 *    60 cursor          `.cursor/mcp.json`, `~/.cursor/mcp.json`
 *    50 vscode          `.vscode/mcp.json`, user `Code/User/mcp.json`
 *    40 windsurf        `~/.codeium/windsurf/mcp_config.json`
 *    30 gemini          `.gemini/settings.json`, `~/.gemini/settings.json`
 *    20 codex           `~/.codex/config.toml`
 *
 * Within one provider, project-level entries come before user-level ones.
 */
export const DEFAULT_PROVIDERS: readonly ConfigProvider[] = [
  nativeProvider,
  projectMcpJsonProvider,
  claudeCodeProvider,
  claudeDesktopProvider,
  cursorProvider,
  vscodeProvider,
  windsurfProvider,
  geminiProvider,
  codexProvider,
];

export type { ConfigProvider, DiscoveredItem, NativeSettings, ProviderContext, ProviderResult } from './provider.js';
