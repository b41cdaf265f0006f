import { describe, expect, it } from 'vitest';
import { runServe } from '../../../src/cli/serve.js';
import { loadDaemonConfig } from '../../../src/config/load.js';
import { DaemonConfigSchema } from '../../../src/config/schema.js';
import { isSwitchboardError } from '../../../src/errors.js';
import { makeTree } from './temp-tree.js';

/** The `telemetry` block (issue #26): checked at the edge, each problem naming its field. */
describe('telemetry config', () => {
  it('accepts the block, and leaves it out by default', () => {
    expect(DaemonConfigSchema.parse({}).telemetry).toBeUndefined();
    const config = DaemonConfigSchema.parse({ telemetry: { endpoint: 'http://localhost:4318', protocol: 'http/json', serviceName: 'sb', headers: { 'x-key': 'k' } } });
    expect(config.telemetry).toEqual({ endpoint: 'http://localhost:4318', protocol: 'http/json', serviceName: 'sb', headers: { 'x-key': 'k' } });
  });

  it('rejects an unknown protocol, a non-HTTP endpoint and unknown keys, naming the field', () => {
    const issues = (input: unknown) => DaemonConfigSchema.safeParse({ telemetry: input }).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(issues({ protocol: 'grpc' })).toEqual(['telemetry.protocol: must be one of "http/protobuf", "http/json"']);
    expect(issues({ endpoint: 'localhost:4318' })).toEqual(['telemetry.endpoint: must be an http(s) URL']);
    expect(issues({ endpoint: 'grpc://collector:4317' })).toEqual(['telemetry.endpoint: must be an http(s) URL']);
    expect(issues({ exporter: 'otlp' })?.[0]).toMatch(/^telemetry: Unrecognized key: "exporter"/);
  });

  it('fails the load with CONFIG_INVALID and the path, and `serve` exits 2 saying so', async () => {
    const t = await makeTree();
    const path = await t.write('sb.json', { telemetry: { protocol: 'grpc' } });
    const err = await loadDaemonConfig({ path, env: {}, home: t.home }).catch((e: unknown) => e);
    expect(isSwitchboardError(err, 'CONFIG_INVALID')).toBe(true);
    expect((err as Error).message).toBe(`${path}: telemetry.protocol: must be one of "http/protobuf", "http/json"`);
    await expect(runServe(['--config', path], { env: {}, home: t.home, cwd: t.cwd })).rejects.toMatchObject({
      exitCode: 2,
      message: `invalid config: ${path}: telemetry.protocol: must be one of "http/protobuf", "http/json"`,
    });
  });
});
