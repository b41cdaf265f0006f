import { oneLine } from '../context.js';
import { isRecord } from './daemon-client.js';
import { listOf, serverLine, type ServerRow } from './views.js';

interface DefinitionSide {
  description?: string | null;
  title?: string | null;
  annotations?: Record<string, unknown> | null;
  inputSchemaDigest?: string | null;
  outputSchemaDigest?: string | null;
}

interface HeldRow {
  name: string;
  exposedName?: string;
  changed?: string[];
  before?: DefinitionSide;
  after?: DefinitionSide;
}

/** What each changed field shows, before → after. */
const SHOWN: Readonly<Record<string, (side: DefinitionSide) => string>> = {
  description: (side) => quoted(side.description),
  title: (side) => quoted(side.title),
  annotations: (side) => (side.annotations ? JSON.stringify(side.annotations) : '(none)'),
  inputSchema: (side) => digest(side.inputSchemaDigest),
  outputSchema: (side) => digest(side.outputSchemaDigest),
};

/**
 * `switchboard status <server>`: the server's line, its tools, and each held tool (issue #22
 * pinning) with what changed and the command that serves it.
 */
export function renderServerDetail(body: unknown): string {
  const server = (isRecord(body) ? body : {}) as unknown as ServerRow & { tools?: unknown };
  const name = typeof server.name === 'string' ? server.name : '?';
  const out = [serverLine({ ...server, name })];
  const tools = listOf<string>(server, 'tools');
  if (tools.length > 0) out.push(`Tools: ${tools.join(', ')}`);
  const held = listOf<HeldRow>(server, 'heldTools');
  if (held.length > 0) {
    out.push('', `Held tools (changed since they were served; not listed, calls refused until approved):`);
    for (const tool of held) {
      out.push(`  ${tool.name}${tool.exposedName ? ` (${tool.exposedName})` : ''}: changed ${(tool.changed ?? []).join(', ')}`);
      for (const field of tool.changed ?? []) {
        const show = SHOWN[field];
        if (show) out.push(`    ${field}: ${show(tool.before ?? {})} → ${show(tool.after ?? {})}`);
      }
      out.push(`    approve: switchboard tools approve ${name} ${tool.name}`);
    }
  }
  return out.join('\n');
}

function quoted(text: string | null | undefined): string {
  return typeof text === 'string' ? JSON.stringify(oneLine(text)) : '(none)';
}

function digest(value: string | null | undefined): string {
  return typeof value === 'string' ? `sha256:${value.slice(0, 12)}` : '(none)';
}
