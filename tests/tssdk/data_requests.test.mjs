// Data requests through the TypeScript SDK against a real `airlock serve` (issue 16): a job that
// asks for a third CSV, the application answering with a follow-up job that succeeds, a refusal;
// the same in a session.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { sdkPath, startServe } from "./support/serve.mjs";

const {
  AirlockClient, AlreadyAnsweredError, NotFoundError, answersFor, jobDataRequests,
  recordText,
} = await import(sdkPath);

let serve, client, other;
before(async () => {
  serve = await startServe();
  client = new AirlockClient({ url: serve.url, apiKey: serve.keys.full });
  other = new AirlockClient({ url: serve.url, apiKey: serve.keys.other });
});
after(async () => {
  await serve?.stop();
});

// Sums three regional exports; without the third among its inputs, it asks the application.
const asking = [
  "import csv, os, airlock_request",
  "if not os.path.exists('/inputs/west.csv'):",
  "    airlock_request.ask('west_sales', 'the west region export is needed for the total',",
  "                        description='CSV with columns region,amount', params={'region': 'west'})",
  "total = sum(int(r['amount']) for n in ('north.csv', 'south.csv', 'west.csv')",
  "            for r in csv.DictReader(open('/inputs/' + n)))",
  "print('total', total)",
].join("\n");

async function exports() {
  return [
    (await client.uploadFile("north.csv", "region,amount\nnorth,3\n")).id,
    (await client.uploadFile("south.csv", "region,amount\nsouth,4\n")).id,
  ];
}

test("a job asks for data; a follow-up job with answers succeeds and both records link", async () => {
  const inputs = await exports();
  const first = await client.runJob({ code: asking, language: "python", inputs });
  assert.equal(first.outcome, "input_requested", JSON.stringify(first.record));
  const [req, ...rest] = jobDataRequests(first);
  assert.equal(rest.length, 0);
  assert.deepEqual([req.id, req.name, req.why], ["r1", "west_sales", "the west region export is needed for the total"]);
  assert.equal(req.description, "CSV with columns region,amount");
  assert.deepEqual(req.params, { region: "west" });
  assert.deepEqual(req.answer, { state: "open" });
  assert.doesNotMatch(recordText(first.record.stdout), /total/);

  const west = await client.uploadFile("west.csv", "region,amount\nwest,5\n");
  assert.deepEqual(answersFor(first), { job: first.id, requests: ["r1"] });
  const follow = await client.runJob({ code: asking, language: "python", inputs: [...inputs, west.id], answers: answersFor(first) });
  assert.equal(follow.outcome, "succeeded", JSON.stringify(follow.record));
  assert.equal(recordText(follow.record.stdout), "total 12\n");
  assert.equal(follow.record.answers.job, first.id);
  assert.deepEqual(follow.record.answers.requests, ["r1"]);
  assert.match(follow.record.answers.record_sha256, /^[0-9a-f]{64}$/);

  const [answered] = jobDataRequests(await client.getJob(first.id));
  assert.equal(answered.answer.state, "answered");
  assert.equal(answered.answer.by_job, follow.id);
  await assert.rejects(client.createJob({ code: "print(1)", answers: answersFor(first, "r1") }), AlreadyAnsweredError);
  await assert.rejects(client.refuseJobDataRequest(first.id, "r1", "too late"), AlreadyAnsweredError);
  await assert.rejects(client.createJob({ code: "print(1)", answers: answersFor(first, "r9") }), NotFoundError);
});

test("a job's request refused: recorded with its reason, final, and out of another tenant's reach", async () => {
  const first = await client.runJob({ code: asking, language: "python", inputs: await exports() });
  assert.equal(first.outcome, "input_requested", JSON.stringify(first.record));
  await assert.rejects(other.refuseJobDataRequest(first.id, "r1", "not yours"), NotFoundError);
  await assert.rejects(other.createJob({ code: "print(1)", answers: answersFor(first) }), NotFoundError);
  await client.refuseJobDataRequest(first.id, "r1", "the west export is confidential");
  const [req] = jobDataRequests(await client.getJob(first.id));
  assert.equal(req.answer.state, "refused");
  assert.equal(req.answer.reason, "the west export is confidential");
  assert.ok(req.answer.key_id);
  await assert.rejects(client.refuseJobDataRequest(first.id, "r1", "again"), AlreadyAnsweredError);
  await assert.rejects(client.createJob({ code: "print(1)", answers: answersFor(first, "r1") }), AlreadyAnsweredError);
});

test("a session call asks; answered by a file and a call with answers, then another refused", async () => {
  const session = await client.openSession({ policy: { timeout_s: 60 } });
  try {
    assert.ok((await session.run("kept = 41")).ok);
    const code = [
      "import os, airlock_request",
      "if not os.path.exists('west.csv'):",
      "    airlock_request.ask('west_sales', 'the west export is needed', params={'region': 'west'})",
      "open('west.csv').read().count('\\n')",
    ].join("\n");
    const asked = await session.run(code);
    assert.equal(asked.status, "input_requested", asked.traceback);
    assert.equal(asked.inputRequested, true);
    assert.equal(asked.ok, false);
    assert.deepEqual(asked.dataRequests.map((r) => [r.id, r.name, r.why, r.answer.state]),
                     [["r1", "west_sales", "the west export is needed", "open"]]);
    assert.equal((await session.run("kept + 1")).value, "42", "the kernel's state stays");

    await assert.rejects(session.run("kept = 0", { answers: ["r7"] }), NotFoundError);
    assert.equal((await session.run("kept")).value, "41", "a refused answer ran nothing");
    await assert.rejects(session.refuse("r7", "no such request"), NotFoundError);
    await session.writeFile("west.csv", "region,amount\nwest,5\n");
    const answered = await session.run(code, { answers: ["r1"] });
    assert.equal(answered.status, "ok", answered.traceback);
    assert.equal(answered.value, "2");

    const again = await session.run("import airlock_request\nairlock_request.ask('costs', 'costs are not in the workspace')");
    assert.deepEqual(again.dataRequests.map((r) => r.id), ["r2"]);
    await session.refuse("r2", "no cost data for this analysis");
    await assert.rejects(session.refuse("r2", "twice"), AlreadyAnsweredError);
    await assert.rejects(session.refuse("r1", "already answered"), AlreadyAnsweredError);
    await assert.rejects(session.run("1", { answers: ["r2"] }), AlreadyAnsweredError);
    await assert.rejects(other.refuseSessionDataRequest(session.id, "r2", "not yours"), NotFoundError);
    const learned = await session.run("import airlock_request\nairlock_request.answer('r2')");
    assert.equal(learned.status, "ok", learned.traceback);
    assert.match(learned.value, /refused/);
    assert.match(learned.value, /no cost data for this analysis/);
  } finally {
    await session.close();
  }
});
