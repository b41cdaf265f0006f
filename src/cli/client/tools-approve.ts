import { clientFor, CONNECTION_OPTIONS, helpRequested, parseCommandArgs, UsageError, writeRaw, type CommandIo } from './command.js';
import { isRecord } from './daemon-client.js';
import { serverLine, type ServerRow } from './views.js';

const APPROVE_OPTIONS = { ...CONNECTION_OPTIONS, all: { type: 'boolean' } } as const;

/**
 * `switchboard tools approve <server> [<tool>…|--all]`: serves the new definitions of held tools
 * (issue #22 pinning) through `POST /servers/:name/tools/approve`.
 */
export async function runToolsApprove(io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(io.argv, APPROVE_OPTIONS);
  if (helpRequested(values, io, 'tools')) return 0;
  const [server, ...tools] = positionals;
  if (server === undefined) throw new UsageError('missing <server>');
  if (tools.length === 0 && !values.all) throw new UsageError('name the tools to approve, or --all');
  if (tools.length > 0 && values.all) throw new UsageError('name tools or give --all, not both');
  const client = clientFor(values, io);
  // Approve exactly the definitions the daemon shows now: one changed again in between is refused.
  const detail = await client.request('GET', `/servers/${encodeURIComponent(server)}`);
  const hashes = heldHashes(detail.body);
  const res = await client.request('POST', `/servers/${encodeURIComponent(server)}/tools/approve`, {
    body: values.all ? { all: true, hashes } : { tools, hashes },
  });
  if (values.json) {
    writeRaw(io, res.text);
    return 0;
  }
  const body = isRecord(res.body) ? res.body : {};
  const approved = Array.isArray(body.approved) ? (body.approved as string[]) : [];
  io.stdout.write(approved.length > 0 ? `approved ${approved.join(', ')}\n` : `nothing held on ${server}\n`);
  if (isRecord(body.server)) io.stdout.write(`${serverLine(body.server as unknown as ServerRow)}\n`);
  return 0;
}

/** Tool name → `after.hash` of each held tool in a `GET /servers/:name` answer. */
function heldHashes(detail: unknown): Record<string, string> {
  const hashes: Record<string, string> = {};
  const held = isRecord(detail) && Array.isArray(detail.heldTools) ? detail.heldTools : [];
  for (const tool of held) {
    if (isRecord(tool) && typeof tool.name === 'string' && isRecord(tool.after) && typeof tool.after.hash === 'string') hashes[tool.name] = tool.after.hash;
  }
  return hashes;
}
