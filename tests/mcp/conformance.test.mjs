// The server scenarios of @modelcontextprotocol/conformance that apply to
// airlock (docs/mcp.md says which do not, and why), against /mcp through a
// proxy that adds the API key.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { startServe } from './serve.mjs';
import { startAuthProxy } from './auth_proxy.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const conformance = join(here, 'node_modules', '.bin', 'conformance');
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'server-sse-multiple-streams', 'dns-rebinding-protection'];

let serve, proxy;
before(async () => {
  serve = await startServe();
  proxy = await startAuthProxy(serve.port, serve.keys.alpha);
});
after(async () => {
  await proxy?.close();
  await serve?.stop();
});

for (const scenario of SCENARIOS) {
  test(`conformance: ${scenario}`, async () => {
    const out = await new Promise((resolve, reject) => {
      execFile(process.execPath, [conformance, 'server', '--url', `http://127.0.0.1:${proxy.port}/mcp`,
                                  '--scenario', scenario], { timeout: 120000 },
               (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout)));
    });
    const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
    assert.match(plain, /Passed: (\d+)\/\1, 0 failed/, plain);
  });
}
