import { describe, expect, it } from 'vitest';
import { leanStartSettings } from '../../../src/cli/lean-start.js';

/** Which V8 settings `serve` holds until ready, given node's own flags (issue #44 item 3). */
const held = (execArgv: string[], nodeOptions = ''): string[] => leanStartSettings(execArgv, nodeOptions).map((setting) => setting.hold);

describe('the lean start', () => {
  it('holds the young generation and TurboFan when node was given neither', () => {
    expect(held([])).toEqual(['--semi-space-growth-factor=1', '--no-turbofan']);
    // Flags about something else, and paths that merely contain the words, choose nothing.
    expect(held(['--expose-gc', '--trace-opt', '--optimize-for-size'], '--import=/opt/semi_space/preload.mjs')).toEqual(['--semi-space-growth-factor=1', '--no-turbofan']);
  });

  it("leaves the young generation to the operator's --max-semi-space-size or --semi-space-growth-factor", () => {
    expect(held(['--max-semi-space-size=4'])).toEqual(['--no-turbofan']);
    expect(held([], '--semi-space-growth-factor=3')).toEqual(['--no-turbofan']);
  });

  it("leaves TurboFan to the operator's --no-turbofan, --no-opt, --max-opt or --jitless", () => {
    for (const flag of ['--no-turbofan', '--turbofan', '--no-opt', '--opt', '--max-opt=2', '--jitless']) {
      expect(held([flag]), flag).toEqual(['--semi-space-growth-factor=1']);
      expect(held([], `--max-old-space-size=512 ${flag}`), flag).toEqual(['--semi-space-growth-factor=1']);
    }
  });
});
