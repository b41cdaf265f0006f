import type { SwitchboardRuntime } from '../runtime/runtime.js';

/**
 * Before the startup gate a list (tools, prompts, resources) would be partial: wait for the gate
 * unless told not to (`?wait=false`). A failed start still leaves a (possibly empty) catalogue
 * worth serving; `/status` says why.
 */
export async function settleStartup(runtime: Pick<SwitchboardRuntime, 'state' | 'whenReady'>, wait: string | undefined): Promise<void> {
  if (wait === 'false' || runtime.state === 'ready') return;
  await runtime.whenReady().catch(() => undefined);
}
