import { pino } from 'pino';
import { Gateway, type GatewayDeps } from '../../src/gateway/gateway.js';
import { AgentRegistry } from '../../src/gateway/agents/agent-registry.js';
import { AuditLog } from '../../src/gateway/audit/audit-log.js';
import { openAuditStore } from '../../src/store/audit-store.js';
import { MemoryAgentStore } from '../../src/store/agent-store.js';
import { systemClock } from '../../src/util/clock.js';

const READY = { state: 'ready', whenReady: () => Promise.resolve() } as const;

/**
 * A gateway over `manager` as the daemon builds one, with what a test does not name made small:
 * no agents (loopback trust), an in-memory audit log, a ready runtime and a shutdown signal of its own.
 */
export function testGateway(manager: GatewayDeps['manager'], deps: Partial<Omit<GatewayDeps, 'manager'>> = {}): Gateway {
  const logger = pino({ level: 'silent' });
  return new Gateway({
    manager,
    runtime: READY,
    agents: new AgentRegistry({ config: {}, store: new MemoryAgentStore(), clock: systemClock, logger }),
    audit: new AuditLog({ store: openAuditStore(undefined, true), publish: () => undefined, clock: systemClock }),
    shutdownSignal: new AbortController().signal,
    logger,
    ...deps,
  });
}
