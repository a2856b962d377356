"""Example job for airlock: merge two months of sales into a per-region summary and a chart.

Inside the sandbox it reads /inputs/sales_jan.csv and /inputs/sales_feb.csv and writes
/output/summary.csv and /output/chart.png. Set AIRLOCK_INPUTS and AIRLOCK_OUTPUT to run it
elsewhere (for example directly on the host, to compare).
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

inputs = os.environ.get("AIRLOCK_INPUTS", "/inputs")
output = os.environ.get("AIRLOCK_OUTPUT", "/output")

months = {"jan": "sales_jan.csv", "feb": "sales_feb.csv"}
per_month = []
for month, name in months.items():
    frame = pd.read_csv(os.path.join(inputs, name))
    revenue = frame.groupby("region")["revenue"].sum().rename(f"revenue_{month}")
    per_month.append(revenue)

summary = pd.concat(per_month, axis=1).fillna(0.0)
summary["revenue_total"] = summary.sum(axis=1)
summary = summary.sort_index()
summary.index.name = "region"

os.makedirs(output, exist_ok=True)
summary.to_csv(os.path.join(output, "summary.csv"), float_format="%.2f")

ax = summary[[f"revenue_{m}" for m in months]].plot.bar(figsize=(7, 4), rot=0)
ax.set_title("Revenue by region")
ax.set_xlabel("Region")
ax.set_ylabel("Revenue")
ax.legend(["January", "February"])
plt.tight_layout()
plt.savefig(os.path.join(output, "chart.png"), dpi=100)

best = summary["revenue_total"].idxmax()
print(
    f"{len(summary)} regions, total revenue {summary['revenue_total'].sum():.2f}, "
    f"top region {best} ({summary.loc[best, 'revenue_total']:.2f})"
)
