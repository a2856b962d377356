// The dashboard's pure modules (ui/text.js, ui/sse.js) in node, without a
// browser: how hostile text is shown, the SSE framing, metrics parsing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { showControls, phaseSegments, parseMetrics, isBase64, streamText, bytes } from '../../ui/text.js';
import { SseParser } from '../../ui/sse.js';

test('control characters, ANSI and bidi overrides are shown as escapes; newlines and tabs stay', () => {
  assert.equal(showControls('\x1b[31mRED\x1b[0m'), '\\x1b[31mRED\\x1b[0m');
  assert.equal(showControls('a\tb\nc\r'), 'a\tb\nc\\x0d');
  assert.equal(showControls('a\nb', false), 'a\\x0ab');
  assert.equal(showControls('evil\u202egnp.exe'), 'evil\\u202egnp.exe');
  assert.equal(showControls('zero\u200bwidth\ufeff'), 'zero\\u200bwidth\\ufeff');
  assert.equal(showControls('\x00\x7f\x9b'), '\\x00\\x7f\\x9b');
  assert.equal(showControls('<script>é</script>'), '<script>é</script>', 'markup is left to the text node');
});

test('timing phases become bar segments with shares; junk is skipped', () => {
  const segs = phaseSegments({ admit_ms: 1, run_ms: 3, bogus: 'x', neg_ms: -1, nan_ms: NaN });
  assert.deepEqual(segs.map((s) => [s.name, s.ms, s.share]), [['admit', 1, 0.25], ['run', 3, 0.75]]);
  assert.deepEqual(phaseSegments(null), []);
  assert.deepEqual(phaseSegments({ a_ms: 0 }).map((s) => s.share), [0]);
});

test("timing phases are in the pipeline's order, not the stored object's alphabetical one", () => {
  // A record as the service stores it: keys sorted.
  const sandbox = { admit_ms: 1, collect_ms: 1, prepare_ms: 1, run_ms: 1, start_ms: 1, stop_ms: 1 };
  assert.deepEqual(phaseSegments(sandbox).map((s) => s.name), ['prepare', 'admit', 'start', 'run', 'stop', 'collect']);
  const pooled = { admit_ms: 1, collect_ms: 1, egress_ms: 1, restore_ms: 1, run_ms: 1, start_ms: 1, stop_ms: 1, take_ms: 1 };
  assert.deepEqual(phaseSegments(pooled).map((s) => s.name),
                   ['take', 'admit', 'restore', 'egress', 'start', 'run', 'stop', 'collect']);
  const service = { finish_ms: 1, prepare_ms: 1, queue_ms: 1, run_ms: 1 };
  assert.deepEqual(phaseSegments(service).map((s) => s.name), ['queue', 'prepare', 'run', 'finish']);
  assert.deepEqual(phaseSegments({ zeta_ms: 1, run_ms: 1, alpha_ms: 1 }).map((s) => s.name), ['run', 'alpha', 'zeta'],
                   'a phase the page does not know comes last, by name');
});

test('Prometheus text: names, labels with escapes, values; comments and junk skipped', () => {
  const m = parseMetrics('# HELP x\nairlock_queue_depth 3\nairlock_jobs_total{outcome="failed"} 2\n' +
                         'weird{a="x\\"y"} 1\nnot a metric line\n');
  assert.deepEqual(m, [
    { name: 'airlock_queue_depth', labels: {}, value: 3 },
    { name: 'airlock_jobs_total', labels: { outcome: 'failed' }, value: 2 },
    { name: 'weird', labels: { a: 'x\\"y' }, value: 1 },
  ]);
});

test('only standard base64 passes as a figure', () => {
  assert.ok(isBase64('iVBORw0KGgo='));
  assert.ok(!isBase64('iVBORw0KGgo'), 'wrong length');
  assert.ok(!isBase64('"><script>'), 'markup');
  assert.ok(!isBase64('aGk=;javascript:'));
  assert.ok(!isBase64(42));
});

test("a record's base64 stream is decoded; invalid UTF-8 becomes U+FFFD", () => {
  assert.equal(streamText({ text: 'aGk=', encoding: 'base64' }), 'hi');
  assert.equal(streamText({ text: '/w==', encoding: 'base64' }), '\ufffd');
  assert.equal(streamText({ text: 'plain', encoding: 'utf-8' }), 'plain');
  assert.equal(streamText({ text: '!!!', encoding: 'base64' }), '(undecodable base64)');
  assert.equal(streamText(undefined), '');
  assert.equal(bytes(1536), '1.5 KiB');
});

test('SSE framing: events split across chunks, CRLF, comments, multi-line data', () => {
  const p = new SseParser();
  assert.deepEqual(p.feed(': keep-alive\n\nid: 5\nevent: std'), []);
  assert.deepEqual(p.feed('out\r\ndata: {"text":"a"}\r\n\r\n'), [{ id: '5', event: 'stdout', data: '{"text":"a"}' }]);
  assert.deepEqual(p.feed('data: one\ndata: two\n\nevent: end\ndata:{}\n\n'),
                   [{ id: '', event: 'message', data: 'one\ntwo' }, { id: '', event: 'end', data: '{}' }]);
  assert.deepEqual(p.feed('event: x\n\n'), [], 'an event without data is not dispatched');
  assert.deepEqual(p.feed('data: split\r'), []);
  assert.deepEqual(p.feed('\n\r\n'), [{ id: '', event: 'message', data: 'split' }], 'a CRLF cut between chunks');
});
