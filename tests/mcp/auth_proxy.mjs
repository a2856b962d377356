// A loopback proxy that adds the Bearer key to every request and passes the
// rest through unchanged (Host and Origin included): the conformance
// package's server scenarios take a URL but no credentials.
import { createServer, request } from 'node:http';

export function startAuthProxy(targetPort, key) {
  const server = createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${key}` };
    const up = request({ host: '127.0.0.1', port: targetPort, path: req.url, method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(up);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    port: server.address().port,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  })));
}
