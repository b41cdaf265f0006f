// Node 20: gives the conformance suite (and only it) a node:fs with globSync (see README.md).
import { register } from 'node:module';
register(
  'data:text/javascript,' +
    encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL && context.parentURL.includes('/conformance/dist/')) {
    return { url: ${JSON.stringify(new URL('./fs-with-glob.mjs', import.meta.url).href)}, shortCircuit: true };
  }
  return next(specifier, context);
}`),
);
