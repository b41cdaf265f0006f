// An OTLP/HTTP sink for `BENCH_OTLP` runs (issue #26): accepts every export with 200 and throws it
// away, in its own process so that receiving spans costs neither the daemon nor the bench client.
// Prints its port, then at SIGTERM the number of exports and bytes it got on stderr.
import { createServer } from 'node:http';

let exports = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (chunk) => (bytes += chunk.length));
  req.on('end', () => {
    exports += 1;
    const json = (req.headers['content-type'] ?? '').includes('json');
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => {
  process.stderr.write(`otlp sink: ${exports} exports, ${bytes} bytes\n`);
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
