import type { Metafile } from 'esbuild';

/** Builds the CLI bundle into `outdir` (default dist/); see bundle.mjs. */
export function bundleCli(options?: { outdir?: string; logLevel?: 'silent' | 'error' | 'warning' | 'info' }): Promise<Metafile>;

/** Builds the dashboard into `outdir` (default dist/ui/); see bundle.mjs. */
export function bundleUi(options?: { outdir?: string; logLevel?: 'silent' | 'error' | 'warning' | 'info' }): Promise<Metafile>;
