// Preloaded into every peer the bench starts (node --import <this> <peer cli>). Two jobs:
// 1. Pin every TCP listen() to 127.0.0.1. mcp-hub has no host option and binds every interface
//    (`app.listen(port)`); mcp-proxy has `--host`, but the pin makes "loopback only" hold even if
//    a flag is dropped or renamed in a later version.
// 2. Report the port actually bound, because the bench passes port 0 and neither peer prints the
//    port it got: one `switchboard-bench-listening <address> <port>` line on stderr per listener.
// Unix sockets, handles and file descriptors are left alone.
import net from 'node:net';

const LOOPBACK = '127.0.0.1';
const originalListen = net.Server.prototype.listen;

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const callback = typeof args.at(-1) === 'function' ? args.pop() : undefined;
  const [first, second, third] = args;
  let options;
  if (first !== null && typeof first === 'object') {
    options = { ...first };
  } else if (first === undefined || typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    // listen(port?, host?, backlog?) or listen(port, backlog)
    options = { port: Number(first ?? 0) };
    const backlog = typeof second === 'number' ? second : third;
    if (typeof backlog === 'number') options.backlog = backlog;
  }
  const isTcp = options !== undefined && options.path === undefined && options.handle === undefined && options._handle === undefined && options.fd === undefined;
  if (!isTcp) return originalListen.apply(this, callback ? [...args, callback] : args);

  options.host = LOOPBACK;
  delete options.ipv6Only;
  this.once('listening', () => {
    const address = this.address();
    if (address !== null && typeof address === 'object') {
      process.stderr.write(`switchboard-bench-listening ${address.address} ${address.port}\n`);
    }
  });
  return callback ? originalListen.call(this, options, callback) : originalListen.call(this, options);
};
