// A real `airlock serve` for the dashboard tests: a free loopback port, its
// own data and state directories under one temp dir (mode 0711, as airlock
// run wants), keys made with `airlock keys create`. The binary comes from
// $AIRLOCK_BINARY (tests.cmake passes $<TARGET_FILE:airlock>).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, openSync, readFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const airlock = process.env.AIRLOCK_BINARY && resolve(process.env.AIRLOCK_BINARY);
if (!airlock) throw new Error('set AIRLOCK_BINARY to the airlock binary');

function makeKey(dataDir, tenant, scopes) {
  const out = execFileSync(airlock, ['keys', 'create', '--tenant', tenant, '--scopes', scopes, '--data-dir', dataDir],
                           { stdio: ['ignore', 'pipe', 'ignore'] });
  return out.toString().trim().split('\n').pop();
}

export async function startServe(extraArgs = []) {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-ui-test-'));
  chmodSync(dir, 0o711);
  const dataDir = join(dir, 'data'), stateDir = join(dir, 'state');
  let child = null;
  try {
    const keys = {
      operator: makeKey(dataDir, 'alpha', 'run,read,publish'),
      reader: makeKey(dataDir, 'alpha', 'read'),
      other: makeKey(dataDir, 'beta', 'run,read'),
      admin: makeKey(dataDir, 'alpha', 'admin'),
    };
    const logPath = join(dir, 'serve.log');
    child = spawn(airlock, ['serve', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--state-dir', stateDir, ...extraArgs],
                  { stdio: ['ignore', 'pipe', openSync(logPath, 'w')] });
    const line = await new Promise((ok, fail) => {
      createInterface({ input: child.stdout }).once('line', ok);
      child.once('exit', (code) => fail(new Error(`airlock serve exited (${code}): ${readFileSync(logPath, 'utf8')}`)));
    });
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
    if (!m) throw new Error(`unexpected first line of airlock serve: ${line}`);
    const url = m[1];
    const stop = async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');  // by pid: the child this function started
        const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
        await exited;
        clearTimeout(timer);
      }
      // What a sandbox left when its process was killed (a test kills the warm
      // pool): airlock's own sweep removes its job directories and cgroups.
      execFileSync(airlock, ['sweep', '--state-dir', stateDir], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    };
    // The pid of the warm pool this serve started (its log's warm_pool event), or null.
    const poolPid = () => {
      for (const l of readFileSync(logPath, 'utf8').split('\n')) {
        try { const j = JSON.parse(l); if (j.event === 'warm_pool') return j.pid; } catch { /* not JSON */ }
      }
      return null;
    };
    return { url, keys, stop, poolPid, log: () => readFileSync(logPath, 'utf8') };
  } catch (e) {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

// The API from the test itself (node's fetch), to make jobs the pages show.
export async function call(url, key, method, path, body) {
  const res = await fetch(url + path, {
    method, headers: { Authorization: 'Bearer ' + key, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, json, text };
}
