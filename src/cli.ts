#!/usr/bin/env node
import { homedir } from 'node:os';
import { runCli } from './cli/dispatch.js';
import { endQuietlyOnBrokenPipe } from './cli/broken-pipe.js';

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
