// The floor under every REST figure: a bare node:http server in its own process that reads the
// request body and answers a fixed echo result — HTTP and loopback cost, nothing else.
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';

const body = Buffer.from(JSON.stringify({ content: [{ type: 'text', text: 'hello from the switchboard bench' }] }));
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
