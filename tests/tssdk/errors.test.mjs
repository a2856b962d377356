// Typed errors from a real service; 429 sent again after Retry-After, a bounded number of times
// (the service made to answer 429 for real: one job running, a queue of one); a download
// corrupted on the way (by a proxy) failing its sha256 check; timeouts.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { startProxy } from "./support/proxy.mjs";
import { sdkPath, startServe } from "./support/serve.mjs";

const sdk = await import(sdkPath);
const { AirlockClient } = sdk;

let serve, tmp, client;
before(async () => {
  tmp = await mkdtemp("/tmp/airlock-tssdk-errors-");
  const config = join(tmp, "serve.toml");
  await writeFile(config, "max_sessions_per_tenant = 1\n");
  serve = await startServe(["--config", config, "--max-running", "1", "--max-queued", "1", "--tenant-max-queued", "1"]);
  client = new AirlockClient({ url: serve.url, apiKey: serve.keys.full });
});
after(async () => {
  await serve?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function rejects(promise, cls, code, status) {
  const e = await promise.then(
    () => assert.fail(`expected ${cls.name}`),
    (err) => err,
  );
  assert.ok(e instanceof cls, `${e?.name}: ${e?.message} is not a ${cls.name}`);
  assert.ok(e instanceof sdk.AirlockApiError);
  assert.equal(e.code, code);
  assert.equal(e.status, status);
  return e;
}

test("typed errors: unauthenticated, forbidden, not found, bad request, bad json-shaped fields", async () => {
  const nobody = new AirlockClient({ url: serve.url, apiKey: "alk_not_a_key" });
  await rejects(nobody.listJobs(), sdk.UnauthenticatedError, "unauthenticated", 401);
  const reader = new AirlockClient({ url: serve.url, apiKey: serve.keys.reader });
  await rejects(reader.createJob({ command: ["true"] }), sdk.ForbiddenError, "forbidden", 403);
  await rejects(client.getJob("0000000000000000"), sdk.NotFoundError, "not_found", 404);
  const e = await rejects(client.createJob({ command: ["true"], policy: { memory_mb: "lots" } }), sdk.BadRequestError, "bad_request", 400);
  assert.equal(e.operation, "createJob");
  await rejects(client.uploadFile("../x", "a"), sdk.BadNameError, "bad_name", 400);
  await rejects(client.listJobs({ limit: 0 }), sdk.BadRequestError, "bad_request", 400);
  // Another tenant's job is not found, never forbidden.
  const other = new AirlockClient({ url: serve.url, apiKey: serve.keys.other });
  const job = await client.runJob({ command: ["sh", "-c", "echo x > /output/x.txt"] });
  await rejects(other.getJob(job.id), sdk.NotFoundError, "not_found", 404);
  await rejects(client.downloadOutput(job.id, "missing.txt"), sdk.NotFoundError, "not_found", 404);
  const failed = await client.runJob({ command: ["sh", "-c", "echo x > /output/x.txt; exit 1"] });
  await rejects(client.publishOutput(failed.id, "x.txt"), sdk.NotPublishableError, "not_publishable", 409);
});

test("typed errors of sessions: bad path, not a file, session closed", async () => {
  const session = await client.openSession();
  try {
    await rejects(session.writeFile("../escape.txt", "x"), sdk.BadPathError, "bad_path", 400);
    await session.writeFile("dir/f.txt", "x");
    await rejects(session.readFile("dir"), sdk.NotAFileError, "not_a_file", 409);
    await rejects(session.listFiles("dir/f.txt"), sdk.NotADirectoryError, "not_a_directory", 409);
  } finally {
    await session.close();
  }
  const e = await rejects(session.run("1"), sdk.SessionClosedError, "session_closed", 409);
  assert.ok(e instanceof sdk.ConflictError);
});

test("429 too_many_sessions is sent again after Retry-After and succeeds once a session closes", async () => {
  const first = await client.openSession();
  const retries = [];
  let closing;
  const patient = new AirlockClient({
    url: serve.url,
    apiKey: serve.keys.full,
    onRetry: (r) => {
      retries.push(r);
      closing ??= first.close();
    },
  });
  const second = await patient.openSession();
  await closing;
  await second.close();
  assert.equal(retries.length, 1);
  assert.deepEqual([retries[0].status, retries[0].code, retries[0].delayMs], [429, "too_many_sessions", 1000]);
});

test("429 overloaded: typed with Retry-After; retried a bounded number of times; then succeeds when the queue frees", async () => {
  const running = await client.createJob({ command: ["sleep", "60"] });
  const queued = await client.createJob({ command: ["true"] });
  try {
    const impatient = new AirlockClient({ url: serve.url, apiKey: serve.keys.full, maxRetries: 0 });
    const e = await rejects(impatient.createJob({ command: ["true"] }), sdk.OverloadedError, "overloaded", 429);
    assert.ok(e instanceof sdk.RateLimitedError);
    assert.equal(e.retryAfterS, 1);

    const retries = [];
    const bounded = new AirlockClient({ url: serve.url, apiKey: serve.keys.full, maxRetries: 2, maxRetryDelayMs: 300, onRetry: (r) => retries.push(r) });
    await rejects(bounded.createJob({ command: ["true"] }), sdk.OverloadedError, "overloaded", 429);
    assert.deepEqual(retries.map((r) => [r.attempt, r.delayMs]), [[0, 300], [1, 300]], "two retries, each capped at maxRetryDelayMs");

    // A deadline shorter than Retry-After: the 429 at once, no wait past the caller's timeout.
    const hurried = [];
    const short = new AirlockClient({ url: serve.url, apiKey: serve.keys.full, onRetry: (r) => hurried.push(r) });
    await rejects(short.createJob({ command: ["true"] }, { timeoutMs: 500 }), sdk.OverloadedError, "overloaded", 429);
    assert.deepEqual(hurried, []);

    let freed;
    const patient = new AirlockClient({
      url: serve.url, apiKey: serve.keys.full,
      onRetry: () => { freed ??= client.cancelJob(queued.id); },
    });
    const job = await patient.createJob({ command: ["true"] });
    await freed;
    assert.ok(job.id);
    await client.cancelJob(job.id);
  } finally {
    await client.cancelJob(running.id);
    await client.cancelJob(queued.id);
  }
});

test("a download corrupted on the way fails its sha256 check, and leaves no file behind", async () => {
  const proxy = await startProxy(serve.port);
  try {
    const job = await client.runJob({ command: ["sh", "-c", "printf 'a%.0s' $(seq 1 1000) > /output/a.txt"] });
    assert.equal(job.outcome, "succeeded");
    const via = new AirlockClient({ url: proxy.url, apiKey: serve.keys.full });
    const good = await via.downloadOutput(job.id, "a.txt");
    assert.equal(good.bytes.length, 1000);

    const isDownload = (m, p) => m === "GET" && p.includes("/outputs/");
    proxy.on(isDownload, "tamper");
    const e = await via.downloadOutput(job.id, "a.txt").then(() => assert.fail("a tampered download passed"), (err) => err);
    assert.ok(e instanceof sdk.ChecksumMismatchError, String(e));
    assert.equal(e.expected, good.sha256);
    assert.notEqual(e.actual, good.sha256);

    proxy.on(isDownload, "tamper");
    const dest = join(tmp, "a.txt");
    await assert.rejects(via.saveOutput(job.id, "a.txt", dest), sdk.ChecksumMismatchError);
    assert.ok(!existsSync(dest) && !existsSync(`${dest}.part`), "nothing of the bad download is left");
    assert.deepEqual((await readdir(tmp)).filter((n) => n.startsWith("a.txt")), []);

    // A session file the same way.
    const session = await via.openSession();
    try {
      await session.writeFile("b.txt", "b".repeat(500));
      proxy.on((m, p) => m === "GET" && p.includes("/files/content"), "tamper");
      await assert.rejects(session.readFile("b.txt"), sdk.ChecksumMismatchError);
      assert.equal((await session.readFile("b.txt")).bytes.length, 500);
    } finally {
      await session.close();
    }
    assert.equal(proxy.log.filter((l) => l.action === "tamper").length, 3);
  } finally {
    await proxy.close();
  }
});

test("timeouts: a call past its timeoutMs, a wait past its deadline (the job is cancelled), an aborted call", async () => {
  // A stalled answer: the proxy forwards nothing of it.
  const proxy = await startProxy(serve.port);
  try {
    proxy.on((m, p) => m === "GET" && p === "/v1/sessions", "stall", { afterBytes: 0 });
    const via = new AirlockClient({ url: proxy.url, apiKey: serve.keys.full });
    await assert.rejects(via.listSessions({}, { timeoutMs: 300 }), sdk.AirlockTimeoutError);
  } finally {
    await proxy.close();
  }
  const job = await client.createJob({ command: ["sleep", "60"] });
  await assert.rejects(client.waitJob(job.id, { timeoutMs: 500 }), sdk.AirlockTimeoutError);
  const after = await client.waitJob(job.id, { timeoutMs: 30000 });
  assert.equal(after.outcome, "cancelled", "the wait that timed out cancelled the job");

  const controller = new AbortController();
  const reason = new Error("the caller gave up");
  const session = await client.openSession();
  try {
    setTimeout(() => controller.abort(reason), 300);
    await assert.rejects(session.run("import time\ntime.sleep(30)", { signal: controller.signal }), (e) => e === reason);
    assert.equal((await session.run("'still there'")).value, "'still there'", "the abandoned call was interrupted");
    await assert.rejects(session.run("import time\ntime.sleep(30)", { timeoutMs: 300 }), sdk.AirlockTimeoutError);
    const calls = (await session.calls()).execs;
    assert.equal(calls.at(-1).status ?? (await session.getCall(calls.at(-1).id, { waitS: 10 })).status, "interrupted");
  } finally {
    await session.close();
  }
  await assert.rejects(new AirlockClient({ url: "http://127.0.0.1:1", apiKey: "x" }).getHealth(), sdk.AirlockConnectionError);
});
