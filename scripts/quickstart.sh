#!/usr/bin/env bash
# Set up airlock, then run the analyst example inside a sandbox:
# two sales CSVs and analyst.py go in read-only; summary.csv and chart.png come out.
# Outputs and the job record land in ./out (relative to where you run this).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${PWD}/out"

"${repo}/scripts/setup.sh"

mkdir -p "$out"
rm -f "$out/summary.csv" "$out/chart.png" "$out/record.json"

echo "airlock quickstart: running examples/analyst.py in a sandbox"
status=0
"${repo}/build/airlock" run \
  --input "${repo}/examples/analyst.py" \
  --input "${repo}/examples/sales_jan.csv" \
  --input "${repo}/examples/sales_feb.csv" \
  --output-dir "$out" \
  --record "$out/record.json" \
  -- python3 /inputs/analyst.py || status=$?

outcome="unknown (no record written)"
if [[ -s "$out/record.json" ]]; then
  outcome="$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r.get("outcome","?") + ": " + r.get("reason",""))' "$out/record.json" 2>/dev/null || echo "unreadable record")"
fi

echo
echo "airlock quickstart: outcome ${outcome} (exit status ${status})"
for f in chart.png summary.csv record.json; do
  if [[ -e "$out/$f" ]]; then
    echo "  $out/$f"
  else
    echo "  $out/$f (missing)"
  fi
done
exit "$status"
