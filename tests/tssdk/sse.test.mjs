// The SSE decoder: events split anywhere on the wire come out whole, comments (the keep-alive)
// are skipped, and every line ending of the format is accepted.
import assert from "node:assert/strict";
import { test } from "node:test";

import { sdkPath } from "./support/serve.mjs";

const { SseDecoder } = await import(sdkPath);

const wire = 'id: 6\nevent: stdout\ndata: {"offset":0,"text":"hello\\n"}\n\n: keep-alive\n\nid: done\nevent: result\ndata: {"a":1}\ndata: {"b":2}\n\n';

test("an event stream fed one character at a time gives the same events", () => {
  const whole = new SseDecoder().feed(wire);
  const d = new SseDecoder();
  const pieces = [];
  for (const ch of wire) pieces.push(...d.feed(ch));
  assert.deepEqual(pieces, whole);
  assert.deepEqual(whole, [
    { id: "6", event: "stdout", data: '{"offset":0,"text":"hello\\n"}' },
    { id: "done", event: "result", data: '{"a":1}\n{"b":2}' },
  ]);
});

test("CRLF and CR line endings, a field without a space, and an event without a name", () => {
  const d = new SseDecoder();
  assert.deepEqual(d.feed("id:1\r\ndata:x\r\n\r\ndata: y\r"), [{ id: "1", event: "message", data: "x" }]);
  assert.deepEqual(d.feed("\r"), [{ id: "", event: "message", data: "y" }]);
});

test("an event cut before its blank line is not given out", () => {
  const d = new SseDecoder();
  assert.deepEqual(d.feed('id: 6\nevent: stdout\ndata: {"offset":0,"text":"hel'), []);
});

test("only comments give no event", () => {
  assert.deepEqual(new SseDecoder().feed(": keep-alive\n\n: keep-alive\n\n"), []);
});

test("CRLF split between two pieces is one line ending", () => {
  const d = new SseDecoder();
  assert.deepEqual(d.feed("data: a\r"), []);
  assert.deepEqual(d.feed("\n\r\n"), [{ id: "", event: "message", data: "a" }]);
});
