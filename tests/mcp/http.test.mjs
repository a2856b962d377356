import { test } from 'node:test';
import { request } from 'node:http';
import assert from 'node:assert/strict';
import { defineSuite } from './tool_suite.mjs';
import { httpClient } from './clients.mjs';

const suite = defineSuite('http', httpClient);

async function post(url, headers, body) {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream', ...headers }, body });
  return { status: res.status, body: await res.text() };
}

// fetch() sets Host itself; node:http sends the one given.
function postWithHost(port, host, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST',
      headers: { Host: host, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } },
      (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
    req.on('error', reject);
    req.end(body);
  });
}

test('http: a request without a valid key is refused with 401', async () => {
  const url = suite.serve().url + '/mcp';
  const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  assert.equal((await post(url, {}, init)).status, 401);
  assert.equal((await post(url, { Authorization: 'Bearer alk_not_a_key' }, init)).status, 401);
  await assert.rejects(httpClient(suite.serve(), 'alk_not_a_key'));
});

test('http: another site (Origin or Host) is refused, loopback is served', async () => {
  const s = suite.serve();
  const auth = { Authorization: `Bearer ${s.keys.alpha}` };
  const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const evil = await post(s.url + '/mcp', { ...auth, Origin: 'http://evil.example.com' }, ping);
  assert.equal(evil.status, 403);
  assert.match(evil.body, /DNS rebinding/);
  assert.equal(await postWithHost(s.port, 'evil.example.com', auth, ping), 403);
  assert.equal(await postWithHost(s.port, `evil.example.com:${s.port}`, auth, ping), 403);
  assert.equal(await postWithHost(s.port, `127.0.0.1:${s.port}`, auth, ping), 200);
  const local = await post(s.url + '/mcp', { ...auth, Origin: `http://localhost:${s.port}` }, ping);
  assert.equal(local.status, 200);
  assert.deepEqual(JSON.parse(local.body), { jsonrpc: '2.0', id: 1, result: {} });
});

test('http: malformed messages get JSON-RPC errors; GET has no stream (405)', async () => {
  const s = suite.serve();
  const auth = { Authorization: `Bearer ${s.keys.alpha}` };
  const url = s.url + '/mcp';
  const notJson = await post(url, auth, '{"jsonrpc":');
  assert.equal(notJson.status, 400);
  assert.equal(JSON.parse(notJson.body).error.code, -32700);
  const noMethod = await post(url, auth, '{"jsonrpc":"2.0","id":7}');
  assert.equal(JSON.parse(noMethod.body).error.code, -32600);
  const unknown = await post(url, auth, '{"jsonrpc":"2.0","id":8,"method":"resources/list"}');
  assert.equal(JSON.parse(unknown.body).error.code, -32601);
  const version = await post(url, { ...auth, 'MCP-Protocol-Version': '1999-01-01' }, '{"jsonrpc":"2.0","id":9,"method":"ping"}');
  assert.equal(version.status, 400);
  const get = await fetch(url, { headers: { ...auth, Accept: 'text/event-stream' } });
  assert.equal(get.status, 405);
});
