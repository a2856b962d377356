# The selftest's analyst job: totals per region of /inputs/sales.csv into
# /output/summary.csv. SKEW (set by the selftest) is added to the first
# total: 0 for the valid job, nonzero for the job whose output must be rejected.
import csv

totals = {}
with open("/inputs/sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["region"]] = totals.get(row["region"], 0.0) + float(row["amount"])
with open("/output/summary.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["region", "total"])
    for i, (region, total) in enumerate(sorted(totals.items())):
        w.writerow([region, round(total + (SKEW if i == 0 else 0), 2)])
print("wrote", len(totals), "regions")
