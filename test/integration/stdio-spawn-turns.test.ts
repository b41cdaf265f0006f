import { describe, expect, it, onTestFinished } from 'vitest';
import { StdioProcessTransport } from '../../src/upstream/transport/stdio-transport.js';
import { fixturePath } from '../helpers/fixtures.js';

describe('StdioProcessTransport spawns', () => {
  it('take turns with the event loop: a timer due during a burst of starts fires before the burst ends', async () => {
    // spawn() blocks until the child has exec'd; started from one chain of microtasks, a burst of
    // them would hold every timer (the startup gate's among them) until the last one.
    const transports = Array.from(
      { length: 6 },
      () =>
        new StdioProcessTransport({
          command: process.execPath,
          args: [fixturePath('never-answers-initialize')],
          env: {},
        }),
    );
    onTestFinished(() => Promise.all(transports.map((t) => t.close())).then(() => undefined));
    const order: string[] = [];
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push('timer');
        resolve();
      }, 0),
    );
    await Promise.all(
      transports.map(async (transport, i) => {
        await transport.start();
        order.push(`spawned ${i}`);
      }),
    );
    await timer;
    expect(order.indexOf('timer')).toBeLessThan(order.length - 1);
    expect(order.filter((entry) => entry.startsWith('spawned'))).toEqual(transports.map((_, i) => `spawned ${i}`));
  });

  it('never spawns once closed while waiting for its turn', async () => {
    const transport = new StdioProcessTransport({
      command: process.execPath,
      args: [fixturePath('never-answers-initialize')],
      env: {},
    });
    const starting = transport.start();
    await transport.close();
    await expect(starting).rejects.toThrow(/closed before it started/);
    expect(transport.pid).toBeUndefined();
  });
});
