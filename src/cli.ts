#!/usr/bin/env node
import * as nodeModule from 'node:module';
import { homedir } from 'node:os';
import { runCli } from './cli/dispatch.js';
import { endQuietlyOnBrokenPipe } from './cli/broken-pipe.js';

// Node 22.1+ keeps compiled code between runs (in the OS temp dir): most of a start is compiling
// the bundle, so a second start is that much faster. Node 20 has no such cache; it is skipped.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
endQuietlyOnBrokenPipe(process.argv[2]);

// The entry only binds the process to the dispatcher; every command lives in `src/cli/`.
process.exitCode = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  home: homedir(),
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
  platform: process.platform,
});
