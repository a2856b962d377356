"""The analyst task (examples/analyst.py) as an assistant would do it with
the Python SDK: a session, the two months of sales uploaded into its
workspace, then three turns that keep their state in the session's kernel:

  1. load the CSVs and summarize revenue per region (the frame stays),
  2. draw the chart: it comes back as PNG bytes in the call's figures,
  3. answer the question (the top region), save summary.csv, download it.

A fixed plan, no model. Run from a checkout, with `airlock serve` running
and a key with the run and read scopes:

    AIRLOCK_API_KEY=alk_... python3 examples/agent/python/analyst.py --out /tmp/analyst

It writes chart.png and summary.csv into --out and prints what it found.
"""
import argparse
import os
import pathlib
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(os.path.dirname(HERE))
try:
    import airlock_serve
except ImportError:  # not installed: use the checkout's sdk/python
    sys.path.insert(0, os.path.join(os.path.dirname(EXAMPLES), "sdk", "python", "src"))
    import airlock_serve

LOAD = """\
import pandas as pd
months = {"jan": "data/sales_jan.csv", "feb": "data/sales_feb.csv"}
frames = {m: pd.read_csv(path) for m, path in months.items()}
summary = pd.concat({f"revenue_{m}": f.groupby("region")["revenue"].sum() for m, f in frames.items()},
                    axis=1).fillna(0.0).sort_index()
summary["revenue_total"] = summary.sum(axis=1)
summary.index.name = "region"
summary
"""

CHART = """\
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
ax = summary[["revenue_jan", "revenue_feb"]].plot.bar(figsize=(7, 4), rot=0)
ax.set_title("Revenue by region")
ax.set_xlabel("Region")
ax.set_ylabel("Revenue")
ax.legend(["January", "February"])
plt.tight_layout()
"""

ANSWER = """\
summary.to_csv("summary.csv", float_format="%.2f")
best = summary["revenue_total"].idxmax()
print(f"{len(summary)} regions, total revenue {summary['revenue_total'].sum():.2f}, "
      f"top region {best} ({summary.loc[best, 'revenue_total']:.2f})")
"""


def turn(session, name, code):
    result = session.run(code, timeout_s=120)
    if not result.ok:
        raise SystemExit(f"turn {name}: {result.status}\n{result.traceback or result.stderr}")
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default=os.environ.get("AIRLOCK_URL", "http://127.0.0.1:8470"))
    p.add_argument("--out", required=True, help="directory for chart.png and summary.csv")
    args = p.parse_args()
    key = os.environ.get("AIRLOCK_API_KEY")
    if not key:
        raise SystemExit("set AIRLOCK_API_KEY (airlock keys create --tenant NAME --scopes run,read)")
    os.makedirs(args.out, exist_ok=True)
    client = airlock_serve.Client(args.url, key, timeout=60)

    with client.session(policy={"memory_mb": 1024, "timeout_s": 120}) as session:
        for month in ("jan", "feb"):
            local = pathlib.Path(EXAMPLES, f"sales_{month}.csv")  # a path is streamed from disk
            session.write_file(f"data/sales_{month}.csv", local)

        table = turn(session, "load", LOAD)
        print("turn 1, the summary:\n" + table.value)

        chart = turn(session, "chart", CHART)
        png = chart.figures[0]  # PNG bytes
        with open(os.path.join(args.out, "chart.png"), "wb") as f:
            f.write(png)
        print(f"turn 2, the chart: {len(png)} bytes of PNG")

        answer = turn(session, "answer", ANSWER)
        session.read_file("summary.csv", dest=os.path.join(args.out, "summary.csv"))  # sha256 checked
        print("turn 3, the answer: " + answer.stdout.strip())
    print(f"session {session.id} closed ({session.record['close_reason']}), "
          f"{len(session.record['calls'])} calls in its record")


if __name__ == "__main__":
    main()
