import { describe, expect, it } from 'vitest';
import { AgentSettingsSchema } from '../../../src/config/agent-schema.js';
import { DaemonConfigSchema } from '../../../src/config/schema.js';
import { scriptSettings } from '../../../src/runtime/part-options.js';

/** Code mode's settings (issue #39): `codeMode` off by default, `scripts` checked at the edge, each problem naming its field. */
describe('code mode config', () => {
  it('is off by default, and an agent may turn it on or off for itself', () => {
    const config = DaemonConfigSchema.parse({});
    expect(config.codeMode).toBe(false);
    expect(config.scripts).toBeUndefined();
    expect(scriptSettings(config)).toEqual({ enabled: false, limits: {} });
    expect(AgentSettingsSchema.parse({ codeMode: true }).codeMode).toBe(true);
    expect(AgentSettingsSchema.safeParse({ codeMode: 'yes' }).error?.issues[0]?.message).toBe('codeMode must be true or false');
  });

  it("turns `scripts` into the runs' settings, memory in MiB into bytes", () => {
    const config = DaemonConfigSchema.parse({
      codeMode: true,
      scripts: { maxRuns: 2, maxRunsPerAgent: 1, memoryMb: 16, timeoutMs: 5000, maxCalls: 10, concurrency: 2, maxOutputChars: 500 },
    });
    expect(scriptSettings(config)).toEqual({
      enabled: true,
      maxRuns: 2,
      maxRunsPerAgent: 1,
      limits: { memoryBytes: 16 * 1024 * 1024, timeoutMs: 5000, maxCalls: 10, concurrency: 2, maxOutputChars: 500 },
    });
  });

  it('rejects a bad limit and an unknown key, naming the field', () => {
    const issues = (scripts: unknown) => DaemonConfigSchema.safeParse({ scripts }).error?.issues.map((i) => i.path.join('.'));
    expect(issues({ memoryMb: 0 })).toEqual(['scripts.memoryMb']);
    expect(issues({ concurrency: 1.5 })).toEqual(['scripts.concurrency']);
    expect(issues({ timeout: 5 })).toEqual(['scripts']);
  });
});
