// Every operation of docs/openapi.json has a method in the SDK: OPERATIONS names it (same method
// and path as the document) and AirlockClient (and Session, for a session's operations) has it.
// An operation added to the document and not to the SDK fails here (and the SDK's build, whose
// OPERATIONS type lists every operationId).
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";

import { repo, sdkPath } from "./support/serve.mjs";

const { AirlockClient, OPERATIONS, Session } = await import(sdkPath);
const doc = JSON.parse(await readFile(join(repo, "docs/openapi.json"), "utf8"));

const documented = [];
for (const [path, item] of Object.entries(doc.paths))
  for (const [method, op] of Object.entries(item)) documented.push({ id: op.operationId, method: method.toUpperCase(), path });

test("every operation of the document is in OPERATIONS, with its method and path", () => {
  assert.ok(documented.length >= 31, `only ${documented.length} operations documented`);
  for (const { id, method, path } of documented) {
    assert.ok(id, `${method} ${path} has no operationId`);
    const entry = OPERATIONS[id];
    assert.ok(entry, `the SDK has no method for operation ${id} (${method} ${path})`);
    assert.equal(entry.method, method, id);
    assert.equal(entry.path, path, id);
  }
});

test("OPERATIONS names no operation the document lacks", () => {
  const ids = new Set(documented.map((o) => o.id));
  for (const id of Object.keys(OPERATIONS)) assert.ok(ids.has(id), `OPERATIONS has ${id}, which the document does not`);
});

test("each operation's method exists on AirlockClient, and on Session for a session's operations", () => {
  for (const [id, entry] of Object.entries(OPERATIONS)) {
    assert.equal(entry.client, id, "the client method is named by the operationId");
    assert.equal(typeof AirlockClient.prototype[entry.client], "function", `AirlockClient.${entry.client}`);
    if (entry.path.startsWith("/v1/sessions/{id}"))
      assert.equal(typeof Session.prototype[entry.session], "function", `Session.${entry.session} for ${id}`);
  }
});
