import { signal } from '@preact/signals';
import { needsKey, storedKey } from './api.js';
import { applyEvent, refreshStatus } from './state.js';
import type { FeedEvent } from './types.js';

/** The subprotocol `/events` answers with; the key rides beside it (src/http/guards/auth.ts). */
const SUBPROTOCOL = 'switchboard.events';
const BEARER_PREFIX = 'switchboard.bearer.';
/** How many past events a hello brings (`?recent=`). */
const HISTORY = 200;

export type FeedStatus = 'connecting' | 'live' | 'reconnecting';
export const feedStatus = signal<FeedStatus>('connecting');
/** The last `seq` applied: a reconnect asks for what came after it (`?since=`), so nothing is lost or shown twice. */
export const lastSeq = signal<number | undefined>(undefined);

let socket: WebSocket | undefined;
let retryMs = 250;
let retryTimer: ReturnType<typeof setTimeout> | undefined;
let stopped = false;

function base64url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Opens the one `/events` socket every view is driven by; reconnects on its own, resuming by `seq`. */
export function startFeed(): void {
  stopped = false;
  clearTimeout(retryTimer);
  const since = lastSeq.value;
  // A hello (the first, or after a gap too old to replay) brings the latest events along: the Events view opens with history.
  const query = since === undefined ? `recent=${HISTORY}` : `since=${since}&recent=${HISTORY}`;
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/events?${query}`;
  const key = storedKey();
  // The key goes in the subprotocol list, never in the URL (URLs end up in logs and history).
  const ws = new WebSocket(url, key === null ? [SUBPROTOCOL] : [SUBPROTOCOL, BEARER_PREFIX + base64url(key)]);
  socket = ws;
  ws.onopen = () => {
    retryMs = 250;
  };
  ws.onmessage = (message: MessageEvent<string>) => {
    const event = JSON.parse(message.data) as FeedEvent;
    const last = lastSeq.value;
    // A replay can only overlap what was seen, never skip: drop anything already applied.
    if (event.type !== 'hello' && last !== undefined && event.seq <= last) return;
    if (feedStatus.value !== 'live') feedStatus.value = 'live';
    lastSeq.value = event.seq;
    applyEvent(event);
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    socket = undefined;
    if (stopped) return;
    feedStatus.value = 'reconnecting';
    // A refused handshake looks like any other close to a page: ask /status whether the key is the cause.
    void refreshStatus().then(() => {
      if (needsKey.value || stopped) return;
      retryTimer = setTimeout(startFeed, retryMs);
      retryMs = Math.min(retryMs * 2, 5000);
    });
  };
}

/** Closes the socket for good (sign-out, a key refused). */
export function stopFeed(): void {
  stopped = true;
  clearTimeout(retryTimer);
  const ws = socket;
  socket = undefined;
  ws?.close();
  feedStatus.value = 'connecting';
}
