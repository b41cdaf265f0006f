import type { ChildRecord } from './store/child-records.js';
import { endLeftovers, judgeRecord } from './upstream/process/leftovers.js';
import { scanProcesses, type ProcessRef } from './util/process-tree.js';

/**
 * The child watchdog: a small process of its own that a daemon starts with its first stdio child
 * (mcp/process/child-watchdog.ts) and that holds a pipe from it. Node cannot ask the kernel to
 * signal its children when it dies (`PR_SET_PDEATHSIG`), and a server that ignores both SIGTERM
 * and the end of its stdin would outlive a daemon killed with SIGKILL or by the OOM killer until
 * the next start reaps it. The pipe closes however the daemon dies; then this ends every recorded
 * child that is still the one recorded, exactly as the reaper does, and exits.
 *
 * Protocol, one line each on stdin: `+<ChildRecord JSON>` a child started, `-<pid>` it is gone.
 * The daemon ends the pipe itself once it has no children left: nothing is recorded then, and
 * the watchdog exits at once. It loads the /proc helpers and nothing else, so it starts fast.
 */

const records = new Map<number, ChildRecord>();
let pending = '';

function isRecord(value: unknown): value is ChildRecord {
  const r = value as Partial<ChildRecord> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    Number.isInteger(r.pid) &&
    Number.isInteger(r.pgid) &&
    Number.isInteger(r.startTime) &&
    typeof r.cmdlineHash === 'string' &&
    typeof r.command === 'string'
  );
}

function apply(line: string): void {
  if (line.startsWith('-')) {
    records.delete(Number(line.slice(1)));
    return;
  }
  if (!line.startsWith('+')) return;
  try {
    const record: unknown = JSON.parse(line.slice(1));
    if (isRecord(record)) records.set(record.pid, record);
  } catch {
    // Not a line of ours: the daemon writes whole lines, so there is nothing to recover.
  }
}

async function endRecorded(): Promise<void> {
  if (records.size === 0) return;
  const processes = scanProcesses();
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  const doomed: ProcessRef[] = [];
  const groups: number[] = [];
  for (const record of records.values()) {
    const verdict = judgeRecord(record, byPid, processes);
    if ('kill' in verdict) {
      doomed.push(...verdict.kill);
      groups.push(record.pgid);
    }
  }
  await endLeftovers(doomed, groups);
}

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  const lines = (pending + chunk).split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) apply(line);
});
// 'end' on a clean close, 'error' if the pipe broke: either way the daemon is gone or done with us.
let ending = false;
const onClosed = (): void => {
  if (ending) return;
  ending = true;
  endRecorded().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.stdin.once('end', onClosed);
process.stdin.once('error', onClosed);
