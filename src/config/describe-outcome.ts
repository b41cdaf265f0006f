import type { DisabledReason, ServerOutcome } from './types.js';

const DISABLED_TEXT: Record<DisabledReason, string> = {
  'project-config-disabled': 'disabled (project config is off)',
  'disabled-servers': 'disabled (listed in disabledServers)',
  'enabled-false': 'disabled (enabled: false)',
};

/** One line saying what discovery decided for an entry, e.g. `shadowed by github (Claude Code, user): same name`. */
export function describeOutcome(outcome: ServerOutcome): string {
  switch (outcome.status) {
    case 'active':
      return 'active';
    case 'shadowed': {
      const { name, source } = outcome.shadowedBy;
      const why = outcome.reason === 'name' ? 'same name' : 'same connection';
      return `shadowed by ${name} (${source.providerName}, ${source.level}): ${why}`;
    }
    case 'disabled':
      return DISABLED_TEXT[outcome.reason];
    case 'filtered':
      return 'filtered (Exa; API key kept)';
    case 'skipped':
      return `skipped: ${outcome.message}`;
    case 'invalid':
      return `invalid: ${outcome.errors.join('; ')}`;
  }
}
