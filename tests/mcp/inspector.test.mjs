// The inspector's CLI mode lists and calls a tool over both transports.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { startServe, airlock } from './serve.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, 'node_modules', '.bin', 'mcp-inspector-cli');

// The inspector-cli 1.0.3 package finds its own package.json through a path
// relative to the working directory ("../package.json"): run it from a
// directory whose parent has one.
function inspector(args, env = {}) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [cli, '--cli', ...args], { cwd: join(here, 'node_modules'), env: { ...process.env, ...env },
                                                          timeout: 120000 },
             (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}

const json = (out) => JSON.parse(out.slice(out.indexOf('{')));

let serve;
before(async () => { serve = await startServe(); });
after(async () => { await serve?.stop(); });

test('inspector --cli over stdio: tools/list and tools/call', async () => {
  const stdio = ['-e', `AIRLOCK_API_KEY=${serve.keys.alpha}`, airlock, 'mcp', '--url', serve.url];
  const list = json(await inspector([...stdio, '--method', 'tools/list']));
  assert.ok(list.tools.some((t) => t.name === 'run_code'));
  const call = json(await inspector([...stdio, '--method', 'tools/call', '--tool-name', 'run_code',
                                     '--tool-arg', 'code=print(6*7)']));
  assert.equal(call.structuredContent.stdout, '42\n');
});

test('inspector --cli over Streamable HTTP: tools/list and tools/call', async () => {
  const http = [`${serve.url}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${serve.keys.alpha}`];
  const list = json(await inspector([...http, '--method', 'tools/list']));
  assert.equal(list.tools.length, 11);
  const call = json(await inspector([...http, '--method', 'tools/call', '--tool-name', 'run_code',
                                     '--tool-arg', 'code=print(6*7)']));
  assert.equal(call.structuredContent.outcome, 'succeeded');
});
