import { z } from 'zod';
import { globProblem } from '../util/glob-matcher.js';

/** A glob over names (`delete_*`, `{rm,mv}`); a malformed one is a config error naming it. */
export const NameGlob = z
  .string()
  .min(1, { error: 'Must not be empty' })
  .superRefine((glob, ctx) => {
    const problem = globProblem(glob);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `invalid glob "${glob}": ${problem}` });
  });
