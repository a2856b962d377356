// examples/agent/typescript: the analyst task in three session turns with the SDK, against a real
// airlock serve. The chart must come back as a PNG (700x400, from the figure), the summary's
// totals must match the input CSVs, and the session must be closed at the end (await using).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { repo, sdkPath, startServe } from "./support/serve.mjs";

const run = promisify(execFile);
const { AirlockClient } = await import(sdkPath);
const example = join(repo, "examples/agent/typescript");
if (!existsSync(join(example, "dist/analyst.js"))) {
  console.log("SKIP: examples/agent/typescript is not built (scripts/test-setup/30-tssdk.sh)");
  process.exit(77);  // ctest: skipped
}

let serve, out;
before(async () => {
  serve = await startServe();
  out = await mkdtemp("/tmp/airlock-tssdk-example-");
});
after(async () => {
  await serve?.stop();
  if (out) await rm(out, { recursive: true, force: true });
});

function revenueByRegion(csv) {
  const [header, ...rows] = csv.trim().split("\n").map((l) => l.split(","));
  const region = header.indexOf("region");
  const revenue = header.indexOf("revenue");
  const sums = {};
  for (const r of rows) sums[r[region]] = (sums[r[region]] ?? 0) + Number(r[revenue]);
  return sums;
}

test("the TypeScript analyst example gets the chart back as PNG bytes in three turns", async () => {
  const { stdout } = await run("node", [join(example, "dist/analyst.js"), out], {
    env: { ...process.env, AIRLOCK_URL: serve.url, AIRLOCK_API_KEY: serve.keys.full },
  });
  assert.match(stdout, /^turn 1: loaded \{'jan': \(12, 4\), 'feb': \(12, 4\)\}$/m);
  assert.match(stdout, /^turn 2: 4 regions, total revenue 40062\.50, top region East \(11330\.00\)$/m);
  assert.match(stdout, /^turn 3: a chart of \d+ bytes$/m);

  const png = await readFile(join(out, "chart.png"));
  assert.deepEqual([...png.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], "a PNG signature");
  assert.equal(png.subarray(12, 16).toString("latin1"), "IHDR");
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [700, 400], "figsize (7, 4) at 100 dpi");

  const jan = revenueByRegion(await readFile(join(repo, "examples/sales_jan.csv"), "utf8"));
  const feb = revenueByRegion(await readFile(join(repo, "examples/sales_feb.csv"), "utf8"));
  const [header, ...rows] = (await readFile(join(out, "summary.csv"), "utf8")).trim().split("\n").map((l) => l.split(","));
  assert.deepEqual(header, ["region", "revenue_jan", "revenue_feb", "revenue_total"]);
  assert.equal(rows.length, 4);
  for (const [region, j, f, total] of rows) {
    assert.equal(Number(j), Math.round(jan[region] * 100) / 100, region);
    assert.equal(Number(f), Math.round(feb[region] * 100) / 100, region);
    assert.ok(Math.abs(Number(total) - (jan[region] + feb[region])) < 0.005, region);
  }

  // `await using` closed the session when the example ended.
  const client = new AirlockClient({ url: serve.url, apiKey: serve.keys.full });
  const sessions = (await client.listSessions()).sessions;
  assert.equal(sessions.length, 1);
  assert.equal(sessions[0].state, "closed");
  assert.equal(sessions[0].close_reason, "closed");
  const closed = await client.getSession(sessions[0].id);
  assert.equal(closed.record.calls.length, 3, "three turns");
  assert.ok(closed.record.events.some((e) => e.event === "download" && e.path === "summary.csv"));
});
