// A scripted assistant: no model, a fixed plan of tool calls, doing what an
// assistant for an analyst does (examples/analyst.py) in three session turns
// through `airlock mcp` over stdio, with the official MCP client.
//
//   AIRLOCK_API_KEY=alk_... node assistant.mjs [--url http://127.0.0.1:8470] [--out DIR]
//
// The airlock binary is $AIRLOCK_BINARY, else `airlock` on PATH. It prints
// what each turn returned and writes the chart the last turn drew to
// DIR/chart.png (default: the current directory).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const examples = join(here, '..', '..');

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const TURNS = [
  // Turn 1: load both months and look at them.
  `import pandas as pd
frames = {m: pd.read_csv(f"/inputs/sales_{m}.csv") for m in ("jan", "feb")}
{m: f.shape for m, f in frames.items()}`,
  // Turn 2: revenue per region and month, from what turn 1 loaded.
  `per_month = [f.groupby("region")["revenue"].sum().rename(f"revenue_{m}") for m, f in frames.items()]
summary = pd.concat(per_month, axis=1).fillna(0.0)
summary["revenue_total"] = summary.sum(axis=1)
summary = summary.sort_index()
summary.to_csv("summary.csv", float_format="%.2f")
best = summary["revenue_total"].idxmax()
print(f"{len(summary)} regions, total revenue {summary['revenue_total'].sum():.2f}, top region {best}")
summary`,
  // Turn 3: the chart, returned as an image.
  `import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
ax = summary[["revenue_jan", "revenue_feb"]].plot.bar(figsize=(7, 4), rot=0)
ax.set_title("Revenue by region")
ax.set_xlabel("Region")
ax.set_ylabel("Revenue")
ax.legend(["January", "February"])
plt.tight_layout()`,
];

export async function runAssistant({ url, key, binary = process.env.AIRLOCK_BINARY || 'airlock', out = '.', log = console.log }) {
  const transport = new StdioClientTransport({
    command: binary,
    args: ['mcp', '--url', url],
    env: { AIRLOCK_API_KEY: key, PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'scripted-analyst', version: '1.0.0' });
  await client.connect(transport);
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`${name}: ${r.content.map((c) => c.text ?? '').join('\n')}`);
    return r;
  };
  const result = { turns: [] };
  try {
    const ids = [];
    for (const month of ['jan', 'feb']) {
      const text = readFileSync(join(examples, `sales_${month}.csv`), 'utf8');
      ids.push((await call('upload_file', { name: `sales_${month}.csv`, text })).structuredContent.file_id);
    }
    const session = (await call('open_session', { files: ids })).structuredContent.session_id;
    log(`session ${session}`);
    try {
      for (const [i, code] of TURNS.entries()) {
        const r = await call('run_in_session', { session_id: session, code });
        const s = r.structuredContent;
        log(`turn ${i + 1}: ${s.status}${s.stdout ? `\n${s.stdout.trimEnd()}` : ''}${s.value ? `\n${s.value}` : ''}`);
        result.turns.push(r);
        const image = r.content.find((c) => c.type === 'image');
        if (image) {
          mkdirSync(out, { recursive: true });
          result.chart = join(out, 'chart.png');
          writeFileSync(result.chart, Buffer.from(image.data, 'base64'));
          log(`turn ${i + 1}: chart (${image.mimeType}) saved as ${result.chart}`);
        }
      }
      const summary = await call('read_session_file', { session_id: session, path: 'summary.csv' });
      result.summary = summary.content.find((c) => c.type === 'text').text;
    } finally {
      await call('close_session', { session_id: session });
    }
  } finally {
    await client.close();
  }
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const key = process.env.AIRLOCK_API_KEY;
  if (!key) {
    console.error('set AIRLOCK_API_KEY (airlock keys create --tenant NAME --scopes run,read)');
    process.exit(2);
  }
  const url = option('--url', process.env.AIRLOCK_SERVER || 'http://127.0.0.1:8470');
  runAssistant({ url, key, out: option('--out', '.') }).catch((e) => {
    console.error(e.message);
    process.exit(1);
  });
}
