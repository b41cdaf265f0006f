import { describe, expect, it } from 'vitest';
import type { ServerStatus } from '../../../../src/events/daemon-events.js';
import { EventBus } from '../../../../src/events/event-bus.js';
import { ServerMetrics } from '../../../../src/http/metrics/server-metrics.js';

/**
 * `switchboard_server_up` and `switchboard_server_restarts_total` as `/metrics` renders them, with
 * restarts counted off a real bus: only a server that comes back after it was lost is a restart,
 * and the counter never goes down (a reload that resets the server's own count does not touch it).
 */

const UP_HEAD = [
  '# HELP switchboard_server_up Whether the MCP server is connected (1) or not (0: connecting, reconnecting, needs_auth, disconnected or failed).',
  '# TYPE switchboard_server_up gauge',
];
const RESTARTS_HEAD = [
  '# HELP switchboard_server_restarts_total Times the MCP server was connected again after it was lost (crash, closed transport, failed ping), since the daemon started.',
  '# TYPE switchboard_server_restarts_total counter',
];

function setUp() {
  const bus = new EventBus();
  const metrics = new ServerMetrics(bus);
  const moves = (server: string, ...statuses: ServerStatus[]): void => {
    for (let i = 1; i < statuses.length; i++) {
      bus.publish({ type: 'server.status', server, previous: statuses[i - 1] as ServerStatus, status: statuses[i] as ServerStatus, toolCount: 0 });
    }
  };
  const restarts = (name: string): string | undefined => metrics.render([{ name, status: 'connected' }]).find((line) => line.startsWith('switchboard_server_restarts_total{'));
  return { metrics, moves, restarts };
}

describe('ServerMetrics', () => {
  it('renders each server up (1) only while connected, sorted by name, with its label escaped', () => {
    const { metrics } = setUp();
    const lines = metrics.render([
      { name: 'zeta', status: 'reconnecting' },
      { name: 'alpha', status: 'connected' },
      { name: 'say "hi"\\now', status: 'failed' },
    ]);
    expect(lines).toEqual([
      ...UP_HEAD,
      'switchboard_server_up{server="alpha"} 1',
      'switchboard_server_up{server="say \\"hi\\"\\\\now"} 0',
      'switchboard_server_up{server="zeta"} 0',
      ...RESTARTS_HEAD,
      'switchboard_server_restarts_total{server="alpha"} 0',
      'switchboard_server_restarts_total{server="say \\"hi\\"\\\\now"} 0',
      'switchboard_server_restarts_total{server="zeta"} 0',
    ]);
  });

  it('counts a restart only when a server is connected again after reconnecting', () => {
    const { moves, restarts } = setUp();
    // The first connect, a failed start, a disconnect and a reload's reconnect are no restarts.
    moves('echo', 'disconnected', 'connecting', 'connected', 'disconnected', 'connecting', 'failed', 'connecting', 'connected');
    expect(restarts('echo')).toBe('switchboard_server_restarts_total{server="echo"} 0');
    moves('echo', 'connected', 'reconnecting', 'connected', 'reconnecting', 'reconnecting', 'connected');
    moves('other', 'connected', 'reconnecting', 'connected');
    expect(restarts('echo')).toBe('switchboard_server_restarts_total{server="echo"} 2');
    expect(restarts('other')).toBe('switchboard_server_restarts_total{server="other"} 1');
  });

  it('keeps the count of a server that left the config and came back, and counts nothing once closed', () => {
    const { metrics, moves, restarts } = setUp();
    moves('echo', 'connected', 'reconnecting', 'connected');
    expect(metrics.render([]).some((line) => line.includes('echo'))).toBe(false);
    expect(restarts('echo')).toBe('switchboard_server_restarts_total{server="echo"} 1');
    metrics.close();
    moves('echo', 'connected', 'reconnecting', 'connected');
    expect(restarts('echo')).toBe('switchboard_server_restarts_total{server="echo"} 1');
  });
});
