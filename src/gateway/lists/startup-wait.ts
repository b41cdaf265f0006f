/** The runtime's start, as a list or a request waits on it. */
export interface StartupState {
  readonly state: string;
  whenReady(): Promise<unknown>;
}

/**
 * Before the startup gate a list (tools, prompts, resources) would be partial: wait for the gate
 * unless told not to (`?wait=false`). A failed start still leaves a (possibly empty) catalogue
 * worth serving; `/status` says why.
 */
export async function settleStartup(runtime: StartupState, wait: string | undefined): Promise<void> {
  if (wait === 'false' || runtime.state === 'ready') return;
  await runtime.whenReady().catch(() => undefined);
}
