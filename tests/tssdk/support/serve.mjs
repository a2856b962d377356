// A real `airlock serve` on a free loopback port for the TypeScript SDK tests, with its own data
// and state directories and keys made by `airlock keys create` (as an operator would), like
// tests/integration/service_fixture.cc does for the C++ tests. stop() ends it by its pid
// (SIGTERM, then SIGKILL if it hangs), sweeps its state directory and removes the directories.
import { execFile, spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { createWriteStream } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, "../../..");
export const airlock = process.env.AIRLOCK_BINARY ?? join(repo, "build/airlock");

const run = promisify(execFile);

/** The SDK as built by `npm run build` in sdk/typescript. */
export const sdkPath = join(repo, "sdk/typescript/dist/index.js");

async function makeKey(dataDir, tenant, scopes) {
  const { stdout } = await run(airlock, ["keys", "create", "--tenant", tenant, "--scopes", scopes, "--data-dir", dataDir]);
  return stdout.trim();
}

/**
 * Starts airlock serve. Keys: full (alpha: run, read, publish), reader (alpha: read),
 * admin (alpha: admin), other (beta: run, read, publish).
 */
export async function startServe(extraArgs = []) {
  const dir = await mkdtemp("/tmp/airlock-tssdk-");
  await chmod(dir, 0o711);
  const dataDir = join(dir, "data");
  const stateDir = join(dir, "state");
  await mkdir(stateDir, { mode: 0o711 });
  let keys;
  try {
    keys = {
      full: await makeKey(dataDir, "alpha", "run,read,publish"),
      reader: await makeKey(dataDir, "alpha", "read"),
      admin: await makeKey(dataDir, "alpha", "admin"),
      other: await makeKey(dataDir, "beta", "run,read,publish"),
    };
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const logPath = join(dir, "serve.log");
  const log = createWriteStream(logPath);
  await new Promise((r) => log.on("open", r));
  const child = spawn(
    airlock,
    ["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDir, "--state-dir", stateDir, ...extraArgs],
    { stdio: ["ignore", "pipe", log] },
  );
  const exited = new Promise((r) => child.once("exit", (code, signal) => r({ code, signal })));
  const firstLine = await new Promise((resolveLine, reject) => {
    let text = "";
    const onData = (b) => {
      text += b.toString();
      const nl = text.indexOf("\n");
      if (nl >= 0) {
        child.stdout.off("data", onData);
        child.stdout.resume();
        resolveLine(text.slice(0, nl));
      }
    };
    child.stdout.on("data", onData);
    exited.then(({ code, signal }) => reject(new Error(`airlock serve ended (${code ?? signal}) before it listened`)));
  }).catch(async (e) => {
    const text = await readFile(logPath, "utf8");
    log.end();
    await rm(dir, { recursive: true, force: true });  // it never started: nothing to sweep
    throw new Error(`${e.message}\n${text}`);
  });
  const m = /127\.0\.0\.1:(\d+)/.exec(firstLine);
  if (!m) {
    child.kill("SIGKILL");
    await exited;
    await rm(dir, { recursive: true, force: true });
    throw new Error(`airlock serve printed: ${firstLine}`);
  }
  const port = Number(m[1]);
  let stopped = false;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    keys,
    dataDir,
    stateDir,
    log: () => readFile(logPath, "utf8"),
    async stop() {
      if (stopped) return;
      stopped = true;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20000);
      await exited;
      clearTimeout(timer);
      log.end();
      await run(airlock, ["sweep", "--state-dir", stateDir]).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
