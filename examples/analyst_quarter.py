"""Example job for airlock that asks for what it lacks (docs/data-requests.md).

A quarter's summary needs three months of sales: /inputs/sales_jan.csv, sales_feb.csv and
sales_mar.csv. When one is missing, the job does not fail or invent it: it asks the application
for it (the job ends input_requested, exit status 119 under `airlock run`), and the application
answers with a follow-up job that has the file, or refuses. With all three it writes
/output/summary.csv.

    airlock run --input examples/analyst_quarter.py --input examples/sales_jan.csv \\
        --input examples/sales_feb.csv -- python3 /inputs/analyst_quarter.py
"""
import csv
import os

import airlock_request

inputs = os.environ.get("AIRLOCK_INPUTS", "/inputs")
output = os.environ.get("AIRLOCK_OUTPUT", "/output")
months = ["jan", "feb", "mar"]

missing = [m for m in months if not os.path.exists(os.path.join(inputs, f"sales_{m}.csv"))]
for m in missing:
    airlock_request.add(f"sales_{m}.csv", f"the quarter's summary needs {m}'s sales as well",
                        description="the monthly export with region and revenue columns",
                        params={"month": m})
if missing:
    airlock_request.stop()

totals = {}
for m in months:
    with open(os.path.join(inputs, f"sales_{m}.csv"), newline="") as f:
        for row in csv.DictReader(f):
            totals[row["region"]] = totals.get(row["region"], 0.0) + float(row["revenue"])
os.makedirs(output, exist_ok=True)
with open(os.path.join(output, "summary.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["region", "revenue_quarter"])
    for region in sorted(totals):
        w.writerow([region, f"{totals[region]:.2f}"])
