// Starts a real `airlock serve` on a free loopback port with its own data
// and state directories, and makes API keys: alpha (run, read), alphaReader
// (read only) and beta (run, read, another tenant). The airlock binary comes
// from $AIRLOCK_BINARY (tests.cmake passes $<TARGET_FILE:airlock>).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, openSync, readFileSync } from 'node:fs';
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
  const dir = mkdtempSync(join(tmpdir(), 'airlock-mcp-test-'));
  try {
    return await launch(dir, extraArgs);
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

async function launch(dir, extraArgs) {
  const dataDir = join(dir, 'data'), stateDir = join(dir, 'state');
  const keys = {
    alpha: makeKey(dataDir, 'alpha', 'run,read'),
    alphaReader: makeKey(dataDir, 'alpha', 'read'),
    beta: makeKey(dataDir, 'beta', 'run,read'),
  };
  const logPath = join(dir, 'serve.log');
  const log = openSync(logPath, 'w');
  const child = spawn(airlock, ['serve', '--listen', '127.0.0.1:0', '--data-dir', dataDir, '--state-dir', stateDir,
                                ...extraArgs], { stdio: ['ignore', 'pipe', log] });
  const line = await new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`airlock serve exited (${code}): ${readFileSync(logPath, 'utf8')}`)));
  });
  const m = /listening on (http:\/\/127\.0\.0\.1:(\d+))/.exec(line);
  if (!m) throw new Error(`unexpected first line of airlock serve: ${line}`);
  const url = m[1];
  return {
    url, port: Number(m[2]), keys, dataDir,
    log: () => readFileSync(logPath, 'utf8'),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 20000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
