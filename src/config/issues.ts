import type { z } from 'zod';
import { RETIRED_KEYS } from './schema.js';

/** One config problem: the dotted field path (empty for the whole document) and what is wrong. */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** `field.path: message`, the form every config error takes. */
export function issueText(issue: ConfigIssue, prefix = ''): string {
  const path = [prefix, issue.path].filter(Boolean).join('.');
  return `${path || '(root)'}: ${issue.message}`;
}

/** Zod issues as config issues; an unknown key gets its own issue whose path is the key. */
export function fromZodIssues(issues: readonly z.core.$ZodIssue[]): ConfigIssue[] {
  return issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: joinPath([...issue.path, key]), message: 'unknown key' }));
    }
    return [{ path: joinPath(issue.path), message: issue.message }];
  });
}

/** Retired keys of `obj` (top-level ones by default, or those of `retired`), each naming its replacement. */
export function retiredKeyIssues(obj: Readonly<Record<string, unknown>>, retired: Readonly<Record<string, string>> = RETIRED_KEYS): ConfigIssue[] {
  return Object.keys(obj)
    .filter((key) => Object.hasOwn(retired, key))
    .map((key) => ({ path: key, message: `no longer supported, use ${retired[key]} instead` }));
}

/**
 * Retired keys first, then the schema's issues, without also calling a retired key "unknown":
 * the strict schema does not know it, but the retirement message is the useful one.
 */
export function mergeIssues(retired: ConfigIssue[], schema: ConfigIssue[]): ConfigIssue[] {
  const named = new Set(retired.map((i) => i.path));
  return [...retired, ...schema.filter((i) => !(i.message === 'unknown key' && named.has(i.path)))];
}

function joinPath(path: readonly PropertyKey[]): string {
  return path.map(String).join('.');
}
