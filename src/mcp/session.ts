import { Client } from '@modelcontextprotocol/client';
import type { OAuthClientProvider, Root, Transport } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import type { ServerConfig, TransportKind } from '../config/types.js';
import { errorMessage } from '../errors.js';
import { MAX_TIMER_MS, abortable, type Deadline } from '../util/abort.js';
import type { ListenerSet } from '../util/listeners.js';
import { closeClient } from './connection.js';
import { versionNegotiation, type EraVerdict, type ProtocolMode } from './protocol-era.js';
import type { StderrRing } from './stderr-ring.js';
import { StdioProcessTransport, type ExitStatus } from './stdio-transport.js';
import { createTransport } from './transports.js';

/** One connect attempt of one server: its config, deadline, and what it collects on the way. */
export interface Attempt {
  name: string;
  config: ServerConfig;
  deadline: Deadline;
  stderr: StderrRing;
  toolsListChanged: ListenerSet<[]>;
  transportErrors: ListenerSet<[Error]>;
  logger?: Logger;
  roots: Root[];
  inheritEnv?: string[];
  clientInfo: { name: string; version: string };
  /** Bounds the `server/discover` probe of the `auto` mode. */
  probeTimeoutMs: number;
  /** Set when a stdio child died by itself during the attempt, for the error message. */
  exit?: ExitStatus;
  /** OAuth for an http/sse server without static credentials (issue #16). */
  authProvider?: OAuthClientProvider;
}

export interface Session {
  client: Client;
  transport: Transport;
}

/**
 * Opens one session: a transport and a `Client` that negotiates per `era` (a `prior` verdict
 * sends no probe). On failure the transport is closed — a stdio child is gone — before this
 * rejects.
 */
export async function openSession(kind: TransportKind, attempt: Attempt, era: { mode: ProtocolMode; prior?: EraVerdict }): Promise<Session> {
  const transport = createTransport(kind, attempt.config, {
    inheritEnv: attempt.inheritEnv,
    onStderr: (chunk) => attempt.stderr.push(chunk),
    ...(attempt.authProvider ? { authProvider: attempt.authProvider } : {}),
  });
  const client = new Client(attempt.clientInfo, {
    capabilities: { roots: {} },
    versionNegotiation: versionNegotiation(era.mode, attempt.probeTimeoutMs),
  });
  const { roots } = attempt;
  client.setRequestHandler('roots/list', () => ({ roots }));
  client.setNotificationHandler('notifications/tools/list_changed', () => attempt.toolsListChanged.emit());
  client.onerror = (err) => {
    attempt.logger?.debug({ err: errorMessage(err) }, 'transport error');
    attempt.transportErrors.emit(err);
  };
  const { signal } = attempt.deadline;
  try {
    // The race is safe: losing it closes the transport below, which ends the work for real.
    const options = era.prior ? { signal, timeout: MAX_TIMER_MS, prior: era.prior } : { signal, timeout: MAX_TIMER_MS };
    await abortable(client.connect(transport, options), signal);
    return { client, transport };
  } catch (err) {
    // Closed first, so a child that died (say, right after answering initialize, failing our
    // next write with EPIPE) has had its exit seen: the error then names its code and stderr.
    await closeClient(client, transport);
    if (transport instanceof StdioProcessTransport && transport.exitedByItself) attempt.exit = transport.exitStatus;
    throw err;
  }
}
