import { EnabledFlagSchema } from './server-schema.js';

/**
 * Typed, recording access to one raw server entry from another tool's file. Each getter checks
 * the type and records a readable error instead of throwing, and remembers which keys were
 * used so the rest can be reported as unknown.
 */
export class EntryReader {
  readonly errors: string[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly raw: Readonly<Record<string, unknown>>) {}

  has(key: string): boolean {
    return this.raw[key] !== undefined;
  }

  string(key: string): string | undefined {
    const v = this.take(key);
    if (v === undefined || typeof v === 'string') return v;
    this.errors.push(`"${key}" must be a string`);
    return undefined;
  }

  stringArray(key: string): string[] | undefined {
    const v = this.take(key);
    if (v === undefined) return undefined;
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return [...v];
    this.errors.push(`"${key}" must be an array of strings`);
    return undefined;
  }

  stringRecord(key: string): Record<string, string> | undefined {
    const v = this.take(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      this.errors.push(`"${key}" must be an object of strings`);
      return undefined;
    }
    const out: Record<string, string> = {};
    for (const [k, item] of Object.entries(v)) {
      if (typeof item === 'string') out[k] = item;
      else this.errors.push(`"${key}.${k}" must be a string`);
    }
    return out;
  }

  /** A nested object (another tool's sub-table), read further by the caller. */
  object(key: string): Record<string, unknown> | undefined {
    const v = this.take(key);
    if (v === undefined) return undefined;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
    this.errors.push(`"${key}" must be an object`);
    return undefined;
  }

  /** A non-negative number, multiplied by `scale` (seconds → ms). */
  duration(key: string, scale = 1): number | undefined {
    const v = this.take(key);
    if (v === undefined) return undefined;
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return Math.round(v * scale);
    this.errors.push(`"${key}" must be a non-negative number`);
    return undefined;
  }

  boolean(key: string): boolean | undefined {
    const v = this.take(key);
    if (v === undefined || typeof v === 'boolean') return v;
    this.errors.push(`"${key}" must be true or false`);
    return undefined;
  }

  /** `enabled`: a boolean or "true" / "false" / "1" / "0" (SPEC §2). */
  enabledFlag(key: string): boolean | string | undefined {
    const v = this.take(key);
    if (v === undefined) return undefined;
    const parsed = EnabledFlagSchema.safeParse(v);
    if (parsed.success) return parsed.data;
    this.errors.push(`"${key}" must be a boolean or "true", "false", "1", "0"`);
    return undefined;
  }

  /** Marks keys this dialect knows but Switchboard has no use for, so they are not "unknown". */
  ignore(...keys: string[]): void {
    for (const k of keys) this.seen.add(k);
  }

  unknownKeys(): string[] {
    return Object.keys(this.raw).filter((k) => !this.seen.has(k));
  }

  private take(key: string): unknown {
    this.seen.add(key);
    return this.raw[key];
  }
}
