// Every error the service answers, as "status code" pairs found in its sources, has a class of
// its own in ERROR_CLASSES (not only the class of its status): an error code added to the
// service and not to the SDK fails here.
import assert from "node:assert/strict";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";

import { repo, sdkPath } from "./support/serve.mjs";

const sdk = await import(sdkPath);
const { ERROR_CLASSES, apiError } = sdk;

async function sources() {
  const out = [];
  for (const dir of ["src/service", "src/api", "src/http", "src/sessions", "src/workspace"])
    for (const name of await readdir(join(repo, dir)))
      if (name.endsWith(".cc") || name.endsWith(".h")) out.push(await readFile(join(repo, dir, name), "utf8"));
  return out.join("\n");
}

test("each (status, code) the service sends has its own error class", async () => {
  const text = await sources();
  const pairs = new Set();
  // api_error(404, "not_found", ...), HttpResponse::error(400, "bad_request", ...), reply_error(431, "...")
  for (const m of text.matchAll(/(?:api_error|error|reply_error)\(\s*(\d{3}),\s*"([a-z_]+)"/g)) pairs.add(`${m[1]} ${m[2]}`);
  // {"bad_path", 400} in the session files' table; {507, "insufficient_storage", ...} refusals
  for (const m of text.matchAll(/\{"([a-z_]+)", (\d{3})\}/g)) pairs.add(`${m[2]} ${m[1]}`);
  for (const m of text.matchAll(/\{(\d{3}), "([a-z_]+)", "/g)) pairs.add(`${m[1]} ${m[2]}`);
  // The connection refusal written as raw bytes (src/http/server.cc).
  for (const m of text.matchAll(/"HTTP\/1\.1 (\d{3})[\s\S]{0,300}?\\"code\\":\\"([a-z_]+)\\"/g))
    pairs.add(`${m[1]} ${m[2]}`);
  assert.ok(pairs.size >= 25, `found only ${[...pairs].join(", ")}`);
  assert.ok(pairs.has("503 busy"), "the raw 503 busy refusal is found");
  for (const pair of pairs) assert.ok(ERROR_CLASSES[pair], `the SDK has no error class for ${pair}`);
});

test("apiError picks the code's class, under its status's class and AirlockApiError", () => {
  const e = apiError(409, "session_closed", "closed", "submitSessionCall");
  assert.ok(e instanceof sdk.SessionClosedError);
  assert.ok(e instanceof sdk.ConflictError);
  assert.ok(e instanceof sdk.AirlockApiError);
  assert.ok(e instanceof sdk.AirlockError);
  assert.equal(e.status, 409);
  assert.equal(e.code, "session_closed");
  assert.equal(e.operation, "submitSessionCall");
  assert.match(e.message, /submitSessionCall: 409 session_closed: closed/);
  // A code the table lacks gets its status's class; "busy" means different things at 409 and 503.
  assert.equal(apiError(409, "new_code", "x", "op").constructor, sdk.ConflictError);
  assert.equal(apiError(503, "busy", "x", "op").constructor, sdk.ServerBusyError);
  assert.equal(apiError(409, "busy", "x", "op").constructor, sdk.SessionBusyError);
  assert.equal(apiError(502, "", "bad gateway", "op").constructor, sdk.ServerError);
  assert.ok(apiError(429, "overloaded", "x", "op", 3) instanceof sdk.RateLimitedError);
  assert.equal(apiError(429, "overloaded", "x", "op", 3).retryAfterS, 3);
});
