import { computed, signal } from '@preact/signals';
import { getJson } from './api.js';
import type { CallFinished, FeedEvent, HelloEvent, ServerSnapshot, StatusBody } from './types.js';

/** Every server by name, as the last `/status`, `hello` and `server.status` told it. */
export const servers = signal<ReadonlyMap<string, ServerSnapshot>>(new Map());
export const serverList = computed(() => [...servers.value.values()].sort((a, b) => a.name.localeCompare(b.name)));
export const daemonState = signal<{ state: string; version: string } | null>(null);
/** The cluster view of the last `/status` (issue #43); null on a lone daemon. */
export const clusterView = signal<Required<Pick<StatusBody, 'replicas' | 'cluster'>> | null>(null);

/** The feed as shown in the Events view, newest last; bounded so a long-open tab stays small. */
export const feed = signal<readonly FeedEvent[]>([]);
const MAX_FEED = 1000;

/** Finished calls of the last minutes, for the Calls view's charts. */
export const calls = signal<readonly CallFinished[]>([]);
export const CALL_WINDOW_MS = 15 * 60_000;

/** Bumped by events that change the approvals, agents or held tools, so those views reload. */
export const approvalsVersion = signal(0);

/** Bumped (at most once a second) after calls finish, so the audit table reloads without polling. */
export const auditVersion = signal(0);
let auditTimer: ReturnType<typeof setTimeout> | undefined;

/** One tick a second, for countdowns and uptimes. */
export const now = signal(Date.now());
setInterval(() => (now.value = Date.now()), 1000);

export function replaceServers(list: readonly ServerSnapshot[]): void {
  servers.value = new Map(list.map((server) => [server.name, server]));
}

function patchServer(name: string, patch: Partial<ServerSnapshot>): void {
  const current = servers.value.get(name);
  if (!current) return void scheduleStatusRefresh();
  const next = new Map(servers.value);
  next.set(name, { ...current, ...patch });
  servers.value = next;
}

let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let concurrencyTimer: ReturnType<typeof setTimeout> | undefined;

/**
 * A server's concurrency limit moves only when its calls finish (issue #35): after a finished
 * call, `/status` is read again within 2 s — once per 2 s however many finish, so a busy daemon
 * is not asked once per call.
 */
function refreshConcurrencySoon(): void {
  concurrencyTimer ??= setTimeout(() => {
    concurrencyTimer = undefined;
    void refreshStatus();
  }, 2000);
}

/**
 * Events carry what changed, not everything a row shows (pid, era, uptime): a short while after
 * a burst of them, `/status` is read once to fill those in.
 */
export function scheduleStatusRefresh(delayMs = 300): void {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => void refreshStatus(), delayMs);
}

export async function refreshStatus(): Promise<void> {
  try {
    const status = await getJson<StatusBody>('/status');
    daemonState.value = { state: status.state, version: status.version };
    replaceServers(status.servers);
    clusterView.value = status.replicas && status.cluster ? { replicas: status.replicas, cluster: status.cluster } : null;
  } catch {
    // A refused key shows the sign-in form (api.ts); anything else is retried by the next event.
  }
}

/** Applies one feed event to the views' state. */
export function applyEvent(event: FeedEvent): void {
  if (event.type === 'hello') {
    const hello = event as FeedEvent & Pick<HelloEvent, 'servers' | 'recent'>;
    replaceServers(hello.servers);
    if (hello.recent) showHistory(hello.recent as unknown as FeedEvent[]);
    scheduleStatusRefresh();
    return;
  }
  const list = feed.value.length >= MAX_FEED ? feed.value.slice(-MAX_FEED + 1) : feed.value.slice();
  list.push(event);
  feed.value = list;
  const server = typeof event.server === 'string' ? event.server : undefined;
  switch (event.type) {
    case 'server.status':
      if (server === undefined) break;
      patchServer(server, {
        status: event.status as ServerSnapshot['status'],
        lastError: (event.error as ServerSnapshot['lastError'] | undefined) ?? (event.status === 'connected' ? null : (servers.value.get(server)?.lastError ?? null)),
        nextRetryAt: (event.nextRetryAt as string | undefined) ?? null,
        toolCount: event.toolCount as number,
        ...(event.status === 'connected' ? {} : { pid: null }),
      });
      scheduleStatusRefresh();
      break;
    case 'tools.changed':
    case 'prompts.changed':
    case 'resources.changed':
      scheduleStatusRefresh();
      break;
    case 'tools.held':
    case 'approval.requested':
    case 'approval.resolved':
      approvalsVersion.value += 1;
      scheduleStatusRefresh();
      break;
    case 'call.finished': {
      refreshConcurrencySoon();
      const cutoff = Date.now() - CALL_WINDOW_MS;
      calls.value = [...calls.value.filter((call) => Date.parse(call.ts) >= cutoff), event as CallFinished];
      auditTimer ??= setTimeout(() => {
        auditTimer = undefined;
        auditVersion.value += 1;
      }, 1000);
      break;
    }
  }
}

/**
 * The events a hello brought as history (`?recent=`, issue #36 item 7): the Events view opens
 * with them. The hello's own snapshot is newer than they are, so they change no server row, and
 * the Calls view reads its past calls from the audit log, so they add none there. Only those after what is shown are added; a history that
 * ends before it is a restarted daemon's, and replaces it.
 */
function showHistory(recent: readonly FeedEvent[]): void {
  const last = feed.value.at(-1)?.seq;
  const restarted = last !== undefined && (recent.at(-1)?.seq ?? 0) < last;
  const fresh = restarted ? recent : recent.filter((event) => last === undefined || event.seq > last);
  feed.value = [...(restarted ? [] : feed.value), ...fresh].slice(-MAX_FEED);
}
