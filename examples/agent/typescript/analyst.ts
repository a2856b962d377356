// The analyst task of examples/analyst.py, as an agent would do it with the TypeScript SDK: a
// fixed plan of three session turns (load the two months of sales, summarize them per region,
// chart the summary), the chart coming back as PNG bytes in the last turn's figures.
//
//   AIRLOCK_URL=http://127.0.0.1:8470 AIRLOCK_API_KEY=alk_... node dist/analyst.js [OUT_DIR]
//
// Writes OUT_DIR/chart.png (from the figure) and OUT_DIR/summary.csv (downloaded, its sha256
// verified), and prints the same line as examples/analyst.py.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { AirlockClient, type RunResult } from "airlock-serve-client";

const examples = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const outDir = resolve(process.argv[2] ?? "out");

function expectOk(turn: string, r: RunResult): RunResult {
  if (!r.ok) throw new Error(`${turn}: ${r.status}\n${r.traceback || r.stderr}`);
  return r;
}

const client = new AirlockClient();  // $AIRLOCK_URL, $AIRLOCK_API_KEY

// `await using` closes the session however this block ends (Symbol.asyncDispose).
await using session = await client.openSession({ policy: { memory_mb: 1024, timeout_s: 120 } });

for (const month of ["jan", "feb"])
  await session.writeFile(`data/sales_${month}.csv`, await readFile(join(examples, `sales_${month}.csv`)));

// Turn 1: load both months; the frames stay in the kernel for the next turns.
const loaded = expectOk("load", await session.run(`
import pandas as pd
months = {"jan": "data/sales_jan.csv", "feb": "data/sales_feb.csv"}
frames = {m: pd.read_csv(path) for m, path in months.items()}
{m: f.shape for m, f in frames.items()}
`));
console.log(`turn 1: loaded ${loaded.value}`);

// Turn 2: revenue per region and month, and the total.
const summarized = expectOk("summarize", await session.run(`
summary = pd.concat({f"revenue_{m}": f.groupby("region")["revenue"].sum() for m, f in frames.items()}, axis=1).fillna(0.0)
summary["revenue_total"] = summary.sum(axis=1)
summary = summary.sort_index()
summary.index.name = "region"
summary.to_csv("summary.csv", float_format="%.2f")
best = summary["revenue_total"].idxmax()
print(f"{len(summary)} regions, total revenue {summary['revenue_total'].sum():.2f}, "
      f"top region {best} ({summary.loc[best, 'revenue_total']:.2f})")
`));
console.log(`turn 2: ${summarized.stdout.trim()}`);

// Turn 3: the chart; every figure left open comes back as PNG bytes.
const charted = expectOk("chart", await session.run(`
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
ax = summary[["revenue_jan", "revenue_feb"]].plot.bar(figsize=(7, 4), rot=0)
ax.set_title("Revenue by region")
ax.set_xlabel("Region")
ax.set_ylabel("Revenue")
ax.legend(["January", "February"])
plt.tight_layout()
`));
const chart = charted.figures[0];
if (!chart) throw new Error("turn 3 returned no figure");
console.log(`turn 3: a chart of ${chart.length} bytes`);

await mkdir(outDir, { recursive: true });
await writeFile(join(outDir, "chart.png"), chart);
const summaryCsv = await session.readFile("summary.csv");  // sha256 checked against X-Content-SHA256
await writeFile(join(outDir, "summary.csv"), summaryCsv.bytes);
console.log(`wrote ${join(outDir, "chart.png")} and ${join(outDir, "summary.csv")} (sha256 ${summaryCsv.sha256})`);
