// The scripted assistant does the analyst task against a real airlock serve.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe } from '../../../tests/mcp/serve.mjs';
import { runAssistant } from './assistant.mjs';

let serve;
const out = mkdtempSync(join(tmpdir(), 'airlock-agent-'));
after(async () => {
  await serve?.stop();
  rmSync(out, { recursive: true, force: true });
});

test('the scripted assistant does the analyst task in three session turns and gets the chart as an image', async () => {
  serve = await startServe();
  const lines = [];
  const r = await runAssistant({ url: serve.url, key: serve.keys.alpha, out, log: (l) => lines.push(l) });
  assert.equal(r.turns.length, 3);
  for (const t of r.turns) assert.equal(t.structuredContent.status, 'ok');
  assert.match(r.turns[1].structuredContent.stdout, /regions, total revenue \d+\.\d\d, top region \w+/);
  const png = readFileSync(r.chart);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(png.length > 5000);
  assert.match(r.summary, /^region,revenue_jan,revenue_feb,revenue_total\n/);
});
