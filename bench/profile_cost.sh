#!/usr/bin/env bash
# What the compute profile costs against standard, on the analyst job (examples/analyst.py: pandas +
# matplotlib with its thread pools, two CSVs in, a CSV and a PNG out), in one run: cold starts,
# interleaved standard, compute, standard, compute... Prints the medians of the job's own run time
# (the record's usage.wall_ms: what the extra seccomp layer and Landlock cost the program) and of the
# whole `airlock run` (adds building the layer and the exec-once handshake), and compute/standard.
#   bench/profile_cost.sh [ROUNDS]      (default 7; AIRLOCK_BUILD=dir of the build)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AIRLOCK_BUILD:-${repo}/build}"
airlock="${build}/airlock"
examples="${repo}/examples"
rounds="${1:-7}"

tmp="$(mktemp -d /var/tmp/airlock-profile-cost-XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
chmod 0711 "$tmp"
mkdir -m 0711 "${tmp}/state"

for ((i = 0; i < rounds; i++)); do
  for profile in standard compute; do
    out="${tmp}/out-${profile}-${i}"
    start=$(date +%s%N)
    "$airlock" run --quiet --json --start cold --state-dir "${tmp}/state" --profile "$profile" \
      --input "${examples}/sales_jan.csv" --input "${examples}/sales_feb.csv" --input "${examples}/analyst.py" \
      --output-dir "$out" -- python3 /inputs/analyst.py >"${tmp}/rec-${profile}-${i}.json"
    end=$(date +%s%N)
    echo "$profile $(((end - start) / 1000)) ${tmp}/rec-${profile}-${i}.json" >>"${tmp}/times"
  done
done

/usr/bin/python3 - "${tmp}/times" <<'PY'
import json, statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
run, job = {}, {}
for profile, us, rec in rows:
    r = json.load(open(rec))
    assert r["outcome"] == "succeeded", (profile, r["outcome"], r["reason"])
    assert r["profile"]["name"] == profile
    run.setdefault(profile, []).append(int(us) / 1000)
    job.setdefault(profile, []).append(r["usage"]["wall_ms"])
print(f"rounds: {len(run['standard'])}, cold starts, interleaved")
for label, data in (("job run (usage.wall_ms)", job), ("airlock run, whole", run)):
    s, c = statistics.median(data["standard"]), statistics.median(data["compute"])
    print(f"{label:26s} standard {s:8.1f} ms   compute {c:8.1f} ms   compute/standard {c / s:.3f}")
PY
