import type { Logger } from 'pino';
import type { TelemetryConfig } from '../config/telemetry-schema.js';
import { errorMessage } from '../errors.js';
import type { TelemetryHandle } from './otel-loader.js';
import { resolveTelemetry } from './telemetry-settings.js';

/**
 * Starts OpenTelemetry export when the config's `telemetry` block or the `OTEL_*` variables ask
 * for it (issue #26); otherwise resolves undefined having loaded nothing, not even the loader.
 * A load failure is logged and the daemon runs untraced: tracing is never a reason not to serve.
 */
export async function startTelemetry(config: TelemetryConfig | undefined, env: NodeJS.ProcessEnv, version: string, logger: Logger): Promise<TelemetryHandle | undefined> {
  const settings = resolveTelemetry(config, env);
  if (!settings) return undefined;
  const log = logger.child({ component: 'telemetry' });
  for (const warning of settings.warnings) log.warn(warning);
  try {
    const { loadTelemetry } = await import('./otel-loader.js');
    return await loadTelemetry(settings, version, log);
  } catch (err) {
    log.error({ err: errorMessage(err) }, 'OpenTelemetry could not be loaded; running without tracing');
    return undefined;
  }
}
