// Every operation of the API through the SDK, against a real `airlock serve`: the last test
// checks that each operationId of docs/openapi.json was answered with success at least once.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { repo, sdkPath, startServe } from "./support/serve.mjs";

const sdk = await import(sdkPath);
const { AirlockClient, recordText } = sdk;

const doc = JSON.parse(await readFile(join(repo, "docs/openapi.json"), "utf8"));
const succeeded = new Set();
const onRequest = (r) => {
  if (r.status >= 200 && r.status < 300) succeeded.add(r.operation);
};

let serve, client, admin, tmp;
before(async () => {
  serve = await startServe();
  client = new AirlockClient({ url: serve.url, apiKey: serve.keys.full, onRequest });
  admin = new AirlockClient({ url: serve.url, apiKey: serve.keys.admin, onRequest });
  tmp = await mkdtemp("/tmp/airlock-tssdk-files-");
});
after(async () => {
  await serve?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

test("health, metrics and the served OpenAPI document (the one the SDK was built from)", async () => {
  assert.deepEqual(await new AirlockClient(serve.url, serve.keys.full).getHealth(), { status: "ok" });
  assert.deepEqual(await client.getHealth(), { status: "ok" });
  assert.match(await client.getMetrics(), /^# (HELP|TYPE) /m);
  assert.deepEqual(await client.getOpenApi(), doc);
});

test("upload, run a job with inputs, policy and checks, read its record, download and publish its output", async () => {
  const csv = "region,revenue\nNorth,10.5\nSouth,4.5\n";
  const inline = await client.uploadFile("sales.csv", csv);
  assert.equal(inline.name, "sales.csv");
  assert.equal(inline.type, "csv");
  assert.equal(inline.sha256, sha256(csv));
  await writeFile(join(tmp, "factor.txt"), "2\n");
  const fromDisk = await client.uploadPath(join(tmp, "factor.txt"));
  assert.equal(fromDisk.name, "factor.txt");
  assert.equal(fromDisk.size, 2);

  const code = [
    "import csv",
    "rows = list(csv.DictReader(open('/inputs/sales.csv')))",
    "k = int(open('/inputs/factor.txt').read())",
    "total = sum(float(r['revenue']) for r in rows) * k",
    "open('/output/total.csv', 'w').write(f'region,revenue\\nall,{total:.2f}\\n')",
    "print('total', total)",
  ].join("\n");
  const job = await client.runJob({
    code,
    language: "python",
    inputs: [inline.id, fromDisk.id],
    policy: { timeout_s: 60, memory_mb: 256, outputs: { types: ["csv"] } },
    checks: [{ kind: "csv_row_count", name: "one row", output: "total.csv", min: 1, max: 1 }],
  });
  assert.equal(job.state, "finished");
  assert.equal(job.outcome, "succeeded", JSON.stringify(job.record));
  assert.equal(recordText(job.record.stdout), "total 30.0\n");
  assert.equal(job.record.checks[0].passed, true);

  const got = await client.getJob(job.id);
  assert.equal(got.id, job.id);
  assert.equal(got.outcome, "succeeded");

  const out = await client.downloadOutput(job.id, "total.csv");
  assert.equal(new TextDecoder().decode(out.bytes), "region,revenue\nall,30.00\n");
  assert.equal(out.sha256, sha256(out.bytes));
  const saved = await client.saveOutput(job.id, "total.csv", join(tmp, "total.csv"));
  assert.equal(await readFile(saved.path, "utf8"), "region,revenue\nall,30.00\n");
  assert.equal(saved.sha256, out.sha256);

  const published = await client.publishOutput(job.id, "total.csv");
  assert.equal(published.job, job.id);
  assert.equal(published.sha256, out.sha256);

  // The finished job's stream replays its output, then ends.
  const events = [];
  for await (const ev of client.streamJobEvents(job.id)) events.push(ev);
  assert.equal(events.at(-1).type, "end");
  assert.equal(events.at(-1).outcome, "succeeded");
  assert.equal(events.filter((e) => e.type === "stdout").map((e) => e.text).join(""), "total 30.0\n");
});

test("a command job created without waiting, waited for with live events", async () => {
  const job = await client.createJob({ command: ["sh", "-c", "echo one; echo two >&2"] });
  assert.ok(job.state === "queued" || job.state === "running" || job.state === "finished");
  const seen = [];
  const done = await client.waitJob(job.id, { onEvent: (e) => seen.push(e) });
  assert.equal(done.outcome, "succeeded");
  assert.deepEqual(seen.filter((e) => e.type !== "end").map((e) => [e.type, e.text]), [["stdout", "one\n"], ["stderr", "two\n"]]);
});

test("list jobs page by page, cancel a running job", async () => {
  const page = await client.listJobs({ limit: 1 });
  assert.equal(page.jobs.length, 1);
  assert.ok(page.next_cursor, "more than one job, so a next page");
  const all = [];
  for await (const j of client.jobs({ limit: 1 })) all.push(j.id);
  assert.ok(all.length >= 2);
  assert.equal(new Set(all).size, all.length, "no job twice across pages");

  const job = await client.createJob({ command: ["sh", "-c", "echo started; sleep 60"] });
  for await (const ev of client.streamJobEvents(job.id)) {
    assert.deepEqual([ev.type, ev.text], ["stdout", "started\n"]);
    break;  // it runs; leaving the loop closes the stream
  }
  const cancelled = await client.cancelJob(job.id);
  assert.equal(cancelled.id, job.id);
  const ended = await client.waitJob(job.id, { timeoutMs: 30000 });
  assert.equal(ended.outcome, "cancelled");
});

test("usage and retention (admin)", async () => {
  const usage = await client.getUsage();
  assert.ok(usage.jobs >= 3);
  assert.ok(usage.storage.total_bytes > 0);
  const byDay = await client.getUsage({ group_by: "day" });
  assert.equal(byDay.group_by, "day");
  assert.ok(byDay.groups.length >= 1 && /^\d+\.\d{6}$/.test(byDay.total.cost.total), JSON.stringify(byDay.total));
  const pools = await client.getPools();
  assert.equal(typeof pools.warm, "number", JSON.stringify(pools));
  assert.ok(["running", "stopped", "none"].includes(pools.process), JSON.stringify(pools));
  const retention = await admin.runRetention();
  assert.equal(typeof retention.removed, "number");
});

test("a session: files, calls, events, interrupt, restart, snapshot, close", async () => {
  const session = await client.openSession({ policy: { memory_mb: 512, timeout_s: 60 } });
  let closed;
  try {
    assert.equal(session.view.state, "ready");
    assert.ok((await client.listSessions()).sessions.some((s) => s.id === session.id));
    assert.equal((await session.info()).id, session.id);
    // tenant: an admin key lists every tenant's, each with its tenant; beta's key may not ask for alpha.
    const everyone = (await admin.listSessions({ tenant: "*" })).sessions;
    assert.equal(everyone.find((s) => s.id === session.id)?.tenant_name, "alpha");
    assert.ok(!(await admin.listSessions({ tenant: "beta" })).sessions.some((s) => s.id === session.id));
    const beta = new AirlockClient({ url: serve.url, apiKey: serve.keys.other });
    await assert.rejects(beta.listSessions({ tenant: "alpha" }), sdk.ForbiddenError);

    const written = await session.writeFile("data/a.txt", "alpha\n");
    assert.deepEqual([written.path, written.size, written.type], ["data/a.txt", 6, "text"]);
    const listing = await session.listFiles("data");
    assert.deepEqual(listing.entries.map((e) => [e.name, e.kind, e.size]), [["a.txt", "file", 6]]);
    const read = await session.readFile("data/a.txt");
    assert.equal(new TextDecoder().decode(read.bytes), "alpha\n");
    assert.equal(read.sha256, written.sha256);
    assert.equal(read.type, "text");

    const r = await session.run("x = open('data/a.txt').read().strip()\nprint(x.upper())\nlen(x)");
    assert.equal(r.status, "ok");
    assert.equal(r.stdout, "ALPHA\n");
    assert.equal(r.value, "5");
    const sh = await session.run("cd data && ls && (exit 3)", { kind: "shell" });
    assert.equal(sh.stdout, "a.txt\n");
    assert.equal(sh.exitCode, 3);
    assert.equal(sh.cwd, "/workspace/data");
    const err = await session.run("1/0");
    assert.equal(err.status, "error");
    assert.ok(!err.ok);
    assert.match(err.traceback, /ZeroDivisionError/);

    // Submit, follow its events, and read it back.
    const call = await session.submit({ code: "for i in range(3): print(i)" });
    const events = [];
    for await (const ev of session.streamCallEvents(call.id)) events.push(ev);
    assert.equal(events.at(-1).type, "result");
    assert.equal(events.at(-1).call.result.stdout, "0\n1\n2\n");
    assert.equal(events.filter((e) => e.type === "stdout").map((e) => e.text).join(""), "0\n1\n2\n");
    const got = await session.getCall(call.id, { waitS: 5 });
    assert.equal(got.status, "ok");
    assert.ok((await session.calls()).execs.some((c) => c.id === call.id));

    // Interrupt a long call: KeyboardInterrupt; the kernel keeps its variables.
    const long = await session.submit({ code: "import time\ntime.sleep(60)" });
    for (let i = 0; i < 100 && (await session.getCall(long.id)).state !== "running"; ++i)
      await new Promise((r) => setTimeout(r, 50));
    await session.interrupt();
    const interrupted = await session.getCall(long.id, { waitS: 20 });
    assert.equal(interrupted.status, "interrupted");
    assert.equal((await session.run("x")).value, "'alpha'");

    // Restart: variables gone, files kept.
    await session.restart();
    const gone = await session.run("x");
    assert.match(gone.traceback, /NameError/);
    assert.equal((await session.run("open('data/a.txt').read()")).value, "'alpha\\n'");

    const snap = await session.snapshot();
    assert.match(snap.digest, /^sha256:[0-9a-f]{64}$/);
    assert.ok((await client.listSnapshots()).snapshots.some((s) => s.digest === snap.digest));
    const info = await client.getSnapshot(snap.digest);
    assert.ok(info.files.some((f) => f.path === "data/a.txt"));
    assert.ok((await admin.listSnapshots({ tenant: "alpha" })).snapshots.some((s) => s.digest === snap.digest));
    assert.equal((await admin.getSnapshot(snap.digest, { tenant: "*" })).tenant, info.tenant);
    await assert.rejects(beta.listSnapshots({ tenant: "*" }), sdk.ForbiddenError);
    await assert.rejects(beta.getSnapshot(snap.digest), sdk.NotFoundError);

    assert.deepEqual(await session.deleteFile("data"), { path: "data", deleted: true });
    assert.deepEqual((await session.listFiles()).entries.filter((e) => e.name === "data"), []);
    assert.deepEqual(await client.deleteSnapshot(snap.digest), { digest: snap.digest, deleted: true });
  } finally {
    closed = await session.close();
  }
  assert.equal(closed.state, "closed");
  assert.equal(closed.close_reason, "closed");
  assert.ok(closed.record.calls.length === 8, JSON.stringify(closed.record.calls.map((c) => c.status)));
});

test("a session closes at the end of withSession, and with Symbol.asyncDispose", async () => {
  let id;
  const value = await client.withSession({}, async (s) => {
    id = s.id;
    return (await s.run("6 * 7")).value;
  });
  assert.equal(value, "42");
  assert.equal((await client.getSession(id)).state, "closed");

  const s = await client.openSession();
  await s[Symbol.asyncDispose]();
  assert.equal((await client.getSession(s.id)).state, "closed");
});

test("a session started from a snapshot, and a job started from it", async () => {
  const first = await client.openSession();
  await first.writeFile("keep.txt", "kept\n");
  const snap = await first.snapshot();
  await first.close();
  await client.withSession({ snapshot: snap.digest }, async (s) => {
    assert.equal((await s.run("open('keep.txt').read()")).value, "'kept\\n'");
  });
  const job = await client.runJob({ command: ["cat", "keep.txt"], snapshot: snap.digest });
  assert.equal(recordText(job.record.stdout), "kept\n");
  await client.deleteSnapshot(snap.digest);
});

test("data requests: a job's and a session's request refused (tests/tssdk/data_requests.test.mjs has the rest)", async () => {
  const ask = "import airlock_request\nairlock_request.ask('more_data', 'the code needs it')";
  const job = await client.runJob({ code: ask, language: "python" });
  assert.equal(job.outcome, "input_requested", JSON.stringify(job.record));
  await client.refuseJobDataRequest(job.id, "r1", "not given");
  await client.withSession({}, async (s) => {
    const asked = await s.run(ask);
    assert.equal(asked.status, "input_requested", asked.traceback);
    await s.refuse(asked.dataRequests[0].id, "not given");
  });
});

test("every operation of docs/openapi.json was called with success", () => {
  const missing = [];
  for (const item of Object.values(doc.paths))
    for (const op of Object.values(item)) if (!succeeded.has(op.operationId)) missing.push(op.operationId);
  assert.deepEqual(missing, []);
});
