import websocket from '@fastify/websocket';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { ERROR_CATALOGUE, SwitchboardError } from '../../errors.js';
import { CLOSE_GOING_AWAY, type EventHub, type EventSink } from './event-hub.js';
import { httpError, sendError } from '../errors/http-error.js';
import { EVENTS_SUBPROTOCOL } from '../guards/auth.js';

export interface EventsRoutesOptions {
  events: EventHub;
  /**
   * How long a socket closed by the daemon (shutdown, or dropped as too slow) may take to finish
   * the closing handshake once the app closes, before it is destroyed so `app.close()` can end.
   * @default 1000
   */
  closeGraceMs?: number;
}

/** Dashboards only listen; anything they send is ignored, so keep what they can send small. */
const MAX_INBOUND_PAYLOAD = 4096;

/**
 * `GET /events`: the WebSocket feed (SPEC §9).
 *
 * - On connect: a `hello` snapshot, then every event as `{seq, ts, type, …}`.
 * - `?since=<seq>`: the events after `seq` from the hub's ring, then live; a fresh `hello` when
 *   they are no longer kept (or `seq` is ahead of the stream, e.g. after a daemon restart).
 * - `?recent=<n>`: a hello carries up to `n` of the latest kept events (`recent`), so a dashboard
 *   opens with history instead of an empty list.
 * - An invalid `since` (not a non-negative integer, or given twice) is refused with HTTP 400
 *   `VALIDATION_FAILED` before the upgrade.
 * - Close codes: 4008 "subscriber too slow" when a subscriber's unsent bytes pass the hub's
 *   `maxBufferedBytes`; 1001 "going away" on shutdown.
 *
 * Registers `@fastify/websocket` inside this (encapsulated) plugin unless a parent already did.
 */
export const eventsRoutes: FastifyPluginAsync<EventsRoutesOptions> = async (app, options) => {
  const { events } = options;
  const closeGraceMs = options.closeGraceMs ?? 1000;
  const sockets = new Set<WebSocket>();

  if (!app.hasDecorator('websocketServer')) {
    await app.register(websocket, {
      options: {
        maxPayload: MAX_INBOUND_PAYLOAD,
        // A browser that offered subprotocols (the dashboard, its key among them) needs one picked;
        // only ours is ever echoed, so the key never comes back in a header.
        handleProtocols: (offered) => (offered.has(EVENTS_SUBPROTOCOL) ? EVENTS_SUBPROTOCOL : false),
      },
      errorHandler(error, socket, request) {
        // Peers vanish without a close frame all the time; that is not a daemon error.
        request.log.debug({ err: error.message }, 'events socket error');
        socket.terminate();
      },
    });
  }

  // Runs before the HTTP server waits for its connections: every feed socket must be gone by then.
  app.addHook('preClose', (done) => {
    for (const socket of sockets) closeWithGrace(socket, CLOSE_GOING_AWAY, 'going away', closeGraceMs);
    done();
  });

  app.route<{ Querystring: Record<string, unknown> }>({
    method: 'GET',
    url: '/events',
    preValidation: async (request: FastifyRequest<{ Querystring: Record<string, unknown> }>, reply: FastifyReply) => {
      const since = parseSince(request.query.since);
      const recent = parseRecent(request.query.recent);
      const invalid = since instanceof Error ? since : recent instanceof Error ? recent : undefined;
      if (invalid) {
        await sendError(reply, httpError('VALIDATION_FAILED', invalid.message));
      }
    },
    // A plain GET (a browser, curl) gets our error shape instead of the plugin's empty 404.
    handler: () => {
      throw new SwitchboardError('UPGRADE_REQUIRED');
    },
    wsHandler: (socket, request) => {
      const since = parseSince(request.query.since);
      const recent = parseRecent(request.query.recent);
      sockets.add(socket);
      const unsubscribe = events.subscribe(websocketSink(socket, closeGraceMs), {
        ...(typeof since === 'number' ? { since } : {}),
        ...(typeof recent === 'number' ? { recent } : {}),
        ...(request.agent ? { agent: request.agent } : {}),
      });
      socket.once('close', () => {
        unsubscribe();
        sockets.delete(socket);
      });
    },
  });
};

/** The hub's view of one socket. */
function websocketSink(socket: WebSocket, closeGraceMs: number): EventSink {
  return {
    send: (data) => socket.send(data),
    get bufferedAmount() {
      return socket.bufferedAmount;
    },
    close: (code, reason) => {
      // A slow subscriber's close frame waits behind its queue; ws destroys the socket if the
      // handshake does not finish within its own closeTimeout (30 s), and preClose sooner.
      if (code === CLOSE_GOING_AWAY) closeWithGrace(socket, code, reason, closeGraceMs);
      else socket.close(code, reason);
    },
  };
}

function closeWithGrace(socket: WebSocket, code: number, reason: string, graceMs: number): void {
  if (socket.readyState === socket.CLOSED) return;
  if (socket.readyState === socket.OPEN) socket.close(code, reason);
  const timer = setTimeout(() => socket.terminate(), graceMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** Most events a hello carries in `recent` (the hub's default ring). */
const MAX_RECENT = 1000;

/** `?recent=<n>`: 0–1000 of the latest events in the hello; an Error when invalid. */
function parseRecent(value: unknown): number | undefined | Error {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,4}$/.test(value) || Number(value) > MAX_RECENT) {
    return new Error(`${ERROR_CATALOGUE.VALIDATION_FAILED.message}: recent must be an integer from 0 to ${MAX_RECENT}`);
  }
  return Number(value);
}

/** `undefined` when absent; an Error (its message is the 400 message) when invalid. */
function parseSince(value: unknown): number | undefined | Error {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) {
    return new Error(`${ERROR_CATALOGUE.VALIDATION_FAILED.message}: since must be a non-negative integer`);
  }
  return Number(value);
}
