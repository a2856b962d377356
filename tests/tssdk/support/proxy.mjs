// A TCP proxy on loopback between an SDK client and `airlock serve`, that misbehaves on request:
// for the next `times` requests whose request line matches, it
//   cut:    forwards `afterBytes` bytes of the answer, then closes both connections (a drop);
//   stall:  forwards `afterBytes` bytes, then forwards nothing more but keeps the connection
//           open (a dead peer: no FIN, no RST, no keep-alive);
//   tamper: flips one bit of the first byte of the answer's body (a corrupted download).
// Everything else passes through unchanged.
import net from "node:net";

export async function startProxy(targetPort) {
  const rules = [];
  const log = [];
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    sockets.add(client);
    sockets.add(upstream);
    let action = null;  // the rule acting on the current answer
    let entry = null;   // its line in the log
    let sent = 0;       // bytes of the current answer forwarded
    let head = Buffer.alloc(0);  // tamper: the answer until its body starts
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("data", (data) => {
      const line = /^(GET|POST|PUT|DELETE|PATCH|HEAD) (\S+) HTTP/.exec(data.subarray(0, 2048).toString("latin1"));
      if (line) {
        action = null;
        entry = null;
        sent = 0;
        head = Buffer.alloc(0);
        const rule = rules.find((r) => r.times > 0 && r.match(line[1], line[2]));
        if (rule) {
          rule.times -= 1;
          action = rule;
          entry = { action: rule.action, method: line[1], path: line[2] };
          log.push(entry);
        }
      }
      upstream.write(data);
    });
    upstream.on("data", (data) => {
      if (!action) return void client.write(data);
      if (action.action === "tamper") {
        if (action.done) return void client.write(data);
        head = Buffer.concat([head, data]);
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) return;
        let body = end + 4;
        if (/transfer-encoding:\s*chunked/i.test(head.subarray(0, end).toString("latin1"))) {
          const size = head.indexOf("\r\n", body);
          if (size < 0) return;
          body = size + 2;
        }
        if (body >= head.length) return;
        head[body] ^= 0x01;
        action.done = true;
        client.write(head);
        return;
      }
      const room = action.afterBytes - sent;
      if (room > 0) {
        const part = data.subarray(0, room);
        client.write(part);
        sent += part.length;
        // Whether the last byte forwarded ends an event (or the header): else it cut one in two.
        entry.onBoundary = part.subarray(-2).toString("latin1") === "\n\n";
      }
      if (sent >= action.afterBytes) {
        if (action.action === "cut") {
          // Let what was written leave, then drop both sides.
          client.end(() => close());
          upstream.destroy();
        }
        // stall: nothing more is forwarded; the client must notice the silence itself.
      }
    });
    client.on("close", close);
    upstream.on("close", () => {
      if (action?.action !== "stall") close();
    });
    client.on("error", close);
    upstream.on("error", close);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const port = server.address().port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    log,
    /** Misbehaves on the next `times` requests for which match(method, path) is true. */
    on(match, action, { afterBytes = 0, times = 1 } = {}) {
      rules.push({ match, action, afterBytes, times });
    },
    clear() {
      rules.length = 0;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
