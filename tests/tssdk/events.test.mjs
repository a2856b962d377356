// Event streams through a proxy that cuts or stalls them: the SDK resumes with Last-Event-ID and
// hands on every byte of output exactly once, in order. A stalled stream (no FIN, no bytes) is
// found dead after 3 keep-alive intervals of silence; a call that prints nothing for many
// intervals is not taken for dead, because the service's keep-alive comments keep coming.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { startProxy } from "./support/proxy.mjs";
import { sdkPath, startServe } from "./support/serve.mjs";

const { AirlockClient } = await import(sdkPath);

const kKeepAliveMs = 100;
let serve, proxy;
before(async () => {
  serve = await startServe(["--event-keepalive-ms", String(kKeepAliveMs)]);
  proxy = await startProxy(serve.port);
});
after(async () => {
  await proxy?.close();
  await serve?.stop();
});

function clientThroughProxy(reconnects) {
  return {
    client: new AirlockClient({ url: proxy.url, apiKey: serve.keys.full, keepAliveMs: kKeepAliveMs, maxReconnects: 8 }),
    onReconnect: (info) => reconnects.push(info),
  };
}

const kLines = 400;
const expected = Array.from({ length: kLines }, (_, i) => `line ${String(i).padStart(4, "0")}\n`).join("");
// Prints the lines over about a second, so the stream is live when it is cut.
const printer = `import sys, time\nfor i in range(${kLines}):\n    print(f"line {i:04d}", flush=True)\n    if i % 20 == 0: time.sleep(0.05)\n`;

function checkContiguous(events) {
  let offset = 0;
  for (const e of events) {
    assert.equal(e.offset, offset, "each chunk starts where the last one ended: nothing lost, nothing twice");
    offset += Buffer.byteLength(e.text);
    assert.equal(e.id, String(offset));
  }
}

test("a job's stream cut twice (inside an event) is resumed without loss or duplicates", async () => {
  proxy.clear();
  const isEvents = (m, p) => m === "GET" && p.includes("/events");
  proxy.on(isEvents, "cut", { afterBytes: 700 });
  proxy.on(isEvents, "cut", { afterBytes: 1333 });
  const reconnects = [];
  const { client, onReconnect } = clientThroughProxy(reconnects);
  const job = await client.createJob({ code: printer, language: "python" });
  const out = [];
  let end;
  for await (const ev of client.streamJobEvents(job.id, { onReconnect })) {
    if (ev.type === "end") end = ev;
    else out.push(ev);
  }
  assert.equal(end.outcome, "succeeded");
  assert.equal(out.map((e) => e.text).join(""), expected);
  checkContiguous(out);
  assert.equal(proxy.log.filter((l) => l.action === "cut").length, 2, "the proxy cut twice");
  assert.ok(proxy.log.some((l) => l.onBoundary === false), "at least one cut fell inside an event");
  assert.equal(reconnects.length, 2);
  assert.ok(reconnects.every((r) => r.reason === "ended" || r.reason === "error"));
  assert.ok(reconnects.every((r) => /^\d+$/.test(r.lastEventId)), "resumed from a byte offset");
});

test("a stalled job stream is found dead by the keep-alive watch and resumed", async () => {
  proxy.clear();
  proxy.log.length = 0;
  proxy.on((m, p) => m === "GET" && p.includes("/events"), "stall", { afterBytes: 900 });
  const reconnects = [];
  const { client, onReconnect } = clientThroughProxy(reconnects);
  const job = await client.createJob({ code: printer, language: "python" });
  const out = [];
  for await (const ev of client.streamJobEvents(job.id, { onReconnect })) if (ev.type !== "end") out.push(ev);
  assert.equal(out.map((e) => e.text).join(""), expected);
  checkContiguous(out);
  assert.deepEqual(reconnects.map((r) => r.reason), ["dead"]);
});

test("a session call's stream cut mid-way is resumed, then its result comes once", async () => {
  proxy.clear();
  proxy.log.length = 0;
  proxy.on((m, p) => m === "GET" && p.includes("/events"), "cut", { afterBytes: 1000 });
  const reconnects = [];
  const { client } = clientThroughProxy(reconnects);
  const session = await client.openSession();
  try {
    const call = await session.submit({ code: printer });
    const out = [];
    const results = [];
    for await (const ev of session.streamCallEvents(call.id, { onReconnect: (i) => reconnects.push(i) })) {
      if (ev.type === "result") results.push(ev);
      else out.push(ev);
    }
    assert.equal(results.length, 1);
    assert.equal(results[0].call.status, "ok");
    assert.equal(out.map((e) => e.text).join(""), expected);
    checkContiguous(out);
    assert.equal(reconnects.length, 1);

    // run() with live output, through a stall this time.
    proxy.on((m, p) => m === "GET" && p.includes("/events"), "stall", { afterBytes: 600 });
    const live = [];
    const r = await session.run(printer, { onOutput: (e) => live.push(e) });
    assert.equal(r.status, "ok");
    assert.equal(live.map((e) => e.text).join(""), expected);
    assert.equal(r.stdout, expected);
  } finally {
    await session.close();
  }
});

test("a call silent for 20 keep-alive intervals is not taken for a dead stream", async () => {
  proxy.clear();
  const reconnects = [];
  const { client } = clientThroughProxy(reconnects);
  const job = await client.createJob({ command: ["sh", "-c", `echo a; sleep ${(20 * kKeepAliveMs) / 1000}; echo b`] });
  const out = [];
  for await (const ev of client.streamJobEvents(job.id, { onReconnect: (i) => reconnects.push(i) }))
    if (ev.type !== "end") out.push(ev.text);
  assert.equal(out.join(""), "a\nb\n");
  assert.deepEqual(reconnects, [], "the keep-alive comments kept the stream alive");
});

test("without keep-alive comments the same silence is taken for dead (the watch is real)", async () => {
  const quiet = await startServe(["--event-keepalive-ms", "600000"]);
  try {
    const reconnects = [];
    const client = new AirlockClient({ url: quiet.url, apiKey: quiet.keys.full, keepAliveMs: kKeepAliveMs, maxReconnects: 50 });
    const job = await client.createJob({ command: ["sh", "-c", `echo a; sleep ${(20 * kKeepAliveMs) / 1000}; echo b`] });
    const out = [];
    for await (const ev of client.streamJobEvents(job.id, { onReconnect: (i) => reconnects.push(i) }))
      if (ev.type !== "end") out.push(ev.text);
    assert.equal(out.join(""), "a\nb\n", "resumed each time without loss or duplicates");
    assert.ok(reconnects.length >= 1 && reconnects.every((r) => r.reason === "dead"));
  } finally {
    await quiet.stop();
  }
});
