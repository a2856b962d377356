import { defineSuite } from './tool_suite.mjs';
import { stdioClient } from './clients.mjs';

defineSuite('stdio', stdioClient);

// The raw stdio transport: untrusted lines get JSON-RPC errors, the server
// goes on, and stdout carries nothing but JSON-RPC messages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { startServe, airlock } from './serve.mjs';

let raw;
before(async () => { raw = await startServe(); });
after(async () => { await raw?.stop(); });

test('stdio: malformed lines get JSON-RPC errors and the server goes on', async () => {
  const child = spawn(airlock, ['mcp', '--url', raw.url], { env: { AIRLOCK_API_KEY: raw.keys.alpha },
                                                             stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = createInterface({ input: child.stdout });
  const replies = [];
  lines.on('line', (l) => replies.push(JSON.parse(l)));  // throws (fails the test) on anything but JSON
  const send = (s) => child.stdin.write(s + '\n');
  send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}');
  send('not json');
  send('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
  send('{"jsonrpc":"2.0","id":2}');
  send('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_code","arguments":"x"}}');
  send('{"jsonrpc":"2.0","id":4,"method":"no/such"}');
  send('\u0000\u0001\ufffd');
  send('{"jsonrpc":"2.0","id":5,"method":"ping"}');
  child.stdin.end();
  await new Promise((resolve) => child.once('exit', resolve));
  const byId = (id) => replies.find((r) => r.id === id);
  assert.equal(byId(0).result.protocolVersion, '2025-11-25');
  const anonymous = replies.filter((r) => r.id === null).map((r) => r.error.code);
  assert.deepEqual(anonymous.sort(), [-32700, -32700, -32600].sort());
  assert.equal(byId(2).error.code, -32600);
  assert.equal(byId(3).error.code, -32602);
  assert.equal(byId(4).error.code, -32601);
  assert.deepEqual(byId(5).result, {});
  assert.equal(child.exitCode, 0);
});

test('stdio: a key on the command line is refused with a clear message', () => {
  const r = spawnSync(airlock, ['mcp', '--url', raw.url, '--key', raw.keys.alpha], { encoding: 'utf8' });
  assert.equal(r.status, 125);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /never give the API key on the command line/);
  const none = spawnSync(airlock, ['mcp', '--url', raw.url], { encoding: 'utf8', env: {} });
  assert.equal(none.status, 125);
  assert.match(none.stderr, /no API key/);
});
