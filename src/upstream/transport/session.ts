import type { Client, OAuthClientProvider, Root, Transport } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import type { ServerConfig, TransportKind } from '../../config/types.js';
import { errorMessage } from '../../errors.js';
import { MAX_TIMER_MS, type Deadline } from '../../util/abort.js';
import { waitFor } from '../../util/wait-for.js';
import type { ListenerSet } from '../../util/listeners.js';
import { closeClient } from './connection.js';
import { versionNegotiation, type EraVerdict, type ProtocolMode } from './protocol-era.js';
import { formatLogMessage } from './log-message.js';
import { AGENT_REQUESTS, RELAYED_NOTIFICATIONS, type ServerTraffic } from './server-traffic.js';
import { PassThroughResult } from './result-schemas.js';
import type { StderrRing } from './stderr-ring.js';
import { StdioProcessTransport, type ExitStatus } from './stdio-transport.js';
import type { HttpFailure } from './first-failure.js';
import type { Throttle } from './retry-after.js';
import { createTransport } from './transports.js';
import { OWN_UI_CAPABILITIES } from './ui-extension.js';
import type { SandboxContext } from '../process/sandbox-plan.js';
import { loadSdk } from '../sdk.js';

/** One connect attempt of one server: its config, deadline, and what it collects on the way. */
export interface Attempt {
  name: string;
  config: ServerConfig;
  deadline: Deadline;
  stderr: StderrRing;
  toolsListChanged: ListenerSet<[]>;
  transportErrors: ListenerSet<[Error]>;
  /** Notifications to relay, and the agent requests of the server. */
  traffic: ServerTraffic;
  logger?: Logger;
  roots: Root[];
  inheritEnv?: string[];
  /** The daemon's sandbox default and own paths (issue #42). */
  sandbox?: SandboxContext;
  clientInfo: { name: string; version: string };
  /** Bounds the `server/discover` probe of the `auto` mode. */
  probeTimeoutMs: number;
  /** Set when a stdio child died by itself during the attempt, for the error message. */
  exit?: ExitStatus;
  /** OAuth for an http/sse server without static credentials (issue #16). */
  authProvider?: OAuthClientProvider;
  /** The server's pause (429/503 with `Retry-After`, issue #26): kept and honoured by every HTTP request. */
  throttle?: Throttle;
  /** The first error answer an http/sse server gave during the attempt (issue #29 item 4). */
  firstHttpFailure?: HttpFailure;
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
  // The first attempt loads the SDK client; the transports below take it synchronously.
  const { Client } = await loadSdk();
  const transport = createTransport(kind, attempt.config, {
    inheritEnv: attempt.inheritEnv,
    onStderr: (chunk) => attempt.stderr.push(chunk),
    ...(attempt.authProvider ? { authProvider: attempt.authProvider } : {}),
    ...(attempt.throttle ? { throttle: attempt.throttle } : {}),
    onHttpFailure: (failure) => void (attempt.firstHttpFailure ??= failure),
    ...(attempt.sandbox ? { sandbox: attempt.sandbox } : {}),
    onSandbox: (sandbox) => attempt.logger?.info({ sandbox }, 'starting in a sandbox'),
  });
  const client = new Client(attempt.clientInfo, {
    // Sampling and elicitation are an agent's to answer: they are relayed to the agent whose call
    // is in progress (SPEC §7), in either era (a modern server's input_required rounds land here too).
    // MCP Apps' views pass through to agents, so their extension is declared too (ui-extension.ts).
    capabilities: { roots: {}, sampling: {}, elicitation: { form: {}, url: {} }, ...OWN_UI_CAPABILITIES },
    versionNegotiation: versionNegotiation(era.mode, attempt.probeTimeoutMs),
    // A modern server's `input_required` is answered (or relayed) by the connection, per request:
    // who can answer depends on the agent behind it (input-required.ts).
    inputRequired: { autoFulfill: false },
  });
  const { traffic } = attempt;
  for (const method of AGENT_REQUESTS) {
    client.setRequestHandler(method, (request, ctx) => traffic.answer(method, request.params, ctx.mcpReq.signal) as never);
  }
  client.setNotificationHandler('notifications/tools/list_changed', () => attempt.toolsListChanged.emit());
  for (const method of RELAYED_NOTIFICATIONS) {
    // The SDK's client types no 2025 task notification: its params pass as they came (any object).
    if (method === 'notifications/tasks/status') {
      client.setNotificationHandler(method, { params: PassThroughResult }, (params) => traffic.emit(method, params));
      continue;
    }
    client.setNotificationHandler(method, (notification) => {
      // MCP log messages also join the server's stderr ring: one place to read what a server said.
      if (method === 'notifications/message') attempt.stderr.pushLog(formatLogMessage(notification.params as never));
      traffic.emit(method, notification.params as Record<string, unknown> | undefined);
    });
  }
  client.onerror = (err) => {
    attempt.logger?.debug({ err: errorMessage(err) }, 'transport error');
    attempt.transportErrors.emit(err);
  };
  const { signal } = attempt.deadline;
  try {
    // The race is safe: losing it closes the transport below, which ends the work for real.
    const options = era.prior ? { signal, timeout: MAX_TIMER_MS, prior: era.prior } : { signal, timeout: MAX_TIMER_MS };
    await waitFor(client.connect(transport, options), { signal });
    return { client, transport };
  } catch (err) {
    // Closed first, so a child that died (say, right after answering initialize, failing our
    // next write with EPIPE) has had its exit seen: the error then names its code and stderr.
    await closeClient(client, transport);
    if (transport instanceof StdioProcessTransport && transport.exitedByItself) attempt.exit = transport.exitStatus;
    throw err;
  }
}
