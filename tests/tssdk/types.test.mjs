// The SDK's types are generated from docs/openapi.json at build time and its code is checked
// against them: the document as it is type-checks; a document changed so that the SDK no longer
// fits it (an operation added or removed, a field the client reads gone) does not, so the
// build (scripts/test-setup/30-tssdk.sh) fails on such a change.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { repo } from "./support/serve.mjs";

const run = promisify(execFile);
const sdkDir = join(repo, "sdk/typescript");
const bin = (name) => join(sdkDir, "node_modules/.bin", name);
const original = JSON.parse(await readFile(join(repo, "docs/openapi.json"), "utf8"));

let tmp;
before(async () => {
  tmp = await mkdtemp("/tmp/airlock-tssdk-types-");
  await cp(join(sdkDir, "src"), join(tmp, "src"), { recursive: true });
  await cp(join(sdkDir, "tsconfig.json"), join(tmp, "tsconfig.json"));
  await symlink(join(sdkDir, "node_modules"), join(tmp, "node_modules"));
});
after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** Generates the types from `doc` and type-checks the SDK's sources against them. */
async function typecheck(doc) {
  const docPath = join(tmp, "openapi.json");
  await writeFile(docPath, JSON.stringify(doc));
  await run(bin("openapi-typescript"), [docPath, "--output", join(tmp, "src/generated/openapi.ts"), "--default-non-nullable", "false"]);
  try {
    await run(bin("tsc"), ["-p", join(tmp, "tsconfig.json"), "--noEmit"]);
    return { ok: true, output: "" };
  } catch (e) {
    return { ok: false, output: String(e.stdout) + String(e.stderr) };
  }
}

const changed = (edit) => {
  const doc = structuredClone(original);
  edit(doc);
  return doc;
};

test("the SDK type-checks against docs/openapi.json as it is", async () => {
  const r = await typecheck(original);
  assert.ok(r.ok, r.output);
});

test("an operation added to the document without a method in the SDK fails the build", async () => {
  const r = await typecheck(changed((d) => {
    d.paths["/v1/things"] = { get: { operationId: "listThings", responses: { 200: { description: "x" }, 401: { description: "y" } } } };
  }));
  assert.ok(!r.ok, "type-checked although the SDK lacks listThings");
  assert.match(r.output, /listThings/);
});

test("an operation removed from the document fails the build (OPERATIONS names it)", async () => {
  const r = await typecheck(changed((d) => {
    delete d.paths["/v1/snapshots/{digest}"].get;
  }));
  assert.ok(!r.ok, "type-checked although getSnapshot is gone");
  assert.match(r.output, /getSnapshot/);
});

test("a field the client reads, gone from a schema, fails the build", async () => {
  const r = await typecheck(changed((d) => {
    delete d.components.schemas.Job.properties.state;
    d.components.schemas.Job.required = d.components.schemas.Job.required.filter((f) => f !== "state");
  }));
  assert.ok(!r.ok, "type-checked although Job.state is gone");
  assert.match(r.output, /state/);
});

test("a session call's result fields changing type fails the build", async () => {
  const r = await typecheck(changed((d) => {
    d.components.schemas.CallResult.properties.figures = { type: "string" };
  }));
  assert.ok(!r.ok, "type-checked although figures is no longer a list");
  assert.match(r.output, /session\.ts/);
});
