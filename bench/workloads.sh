#!/usr/bin/env bash
# Issue 13: what images cost and what the three workloads take (docs/performance.md).
#  Cold start on an image against host and the PSS of a pool per image are measured by
#  bench/image_run.py (run it per image); this script adds:
#  1. Each stored image's size and build time, from its manifest.
#  2. The three workloads of examples/workloads, R runs each, median wall time of the job
#     (the record's usage.wall_ms) and of the whole `airlock run` (start to exit).
# The store is $AIRLOCK_WORKLOAD_IMAGE_DIR (scripts/build-images.sh STORE builds it); images
# that are not in it are left out, saying so. Prints Markdown.
#   bench/workloads.sh [R]        (default 3 runs of each workload)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AIRLOCK_BUILD:-${repo}/build}"
airlock="${build}/airlock"
reps="${1:-3}"
store="${AIRLOCK_WORKLOAD_IMAGE_DIR:-}"
[[ -n "$store" ]] || { echo "bench/workloads.sh: set AIRLOCK_WORKLOAD_IMAGE_DIR to an image store" >&2; exit 125; }

tmp="$(mktemp -d /var/tmp/airlock-workloads-XXXXXX)"
chmod 0711 "$tmp"
export AIRLOCK_STATE_DIR="${tmp}/state"
mkdir -m 0711 "$AIRLOCK_STATE_DIR"
trap 'rm -rf "$tmp"' EXIT

have() { [[ -f "${store}/names/$1" ]]; }

echo "## Machine"
echo
echo "- kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
if grep -q favordynmods /proc/mounts; then fav=on; else fav=off; fi
echo "- cgroup2 favordynmods: ${fav}; cgroup mounts: $(awk '$3 ~ /cgroup/ {print $2 "(" $3 ")"}' /proc/mounts | tr '\n' ' ')"
echo

echo "## Images: size and build time (from the manifests)"
echo
/usr/bin/python3 - "$store" <<'PY'
import json, os, sys
store = sys.argv[1]
print("| image | digest | size | packages | build time |")
print("|---|---|---:|---:|---:|")
for name in sorted(os.listdir(os.path.join(store, "names"))):
    digest = open(os.path.join(store, "names", name)).read().strip()
    hexd = digest.split(":", 1)[1]
    try:
        m = json.load(open(os.path.join(store, "manifests", hexd + ".json")))
    except OSError:
        print(f"| {name} | {digest[:19]} | (no manifest) | | |")
        continue
    size = m.get("size") or os.path.getsize(os.path.join(store, "blobs", hexd + ".erofs"))
    build = m.get("build", {})
    secs = build.get("seconds")
    print(f"| {name} | {digest[:19]} | {size / 2**20:.1f} MiB | {m.get('package_count', '')} | "
          f"{secs:.0f} s |" if secs is not None else "| |")
PY
echo

echo "## The three workloads (${reps} runs each, medians)"
echo
work="${repo}/examples/workloads"
git -C "$tmp" init -q project 2>/dev/null
cp -r "${work}/coding/project/." "${tmp}/project/"
git -C "${tmp}/project" add . && git -C "${tmp}/project" -c user.name=b -c user.email=b@b commit -qm project
git -C "${tmp}/project" bundle create -q "${tmp}/project.bundle" --all
ex="${repo}/examples"
declare -A cmd
cmd[analyst-host]="--input ${ex}/sales_jan.csv --input ${ex}/sales_feb.csv --input ${ex}/analyst.py -- python3 /inputs/analyst.py"
cmd[analyst]="--image python-data --image-dir ${store} ${cmd[analyst-host]}"
cmd[analyst-compute]="--profile compute ${cmd[analyst]}"
cmd[coding]="--image build --image-dir ${store} --memory 1G --timeout 300 --cpu-time 300 --input ${tmp}/project.bundle --input ${work}/coding/job.sh -- /bin/sh /inputs/job.sh"
cmd[render]="--image render --image-dir ${store} --memory 2G --pids 256 --timeout 120 --cpu-time 120 --input ${work}/render/page.html --input ${work}/render/job.sh -- /bin/sh /inputs/job.sh"
declare -A needs=([analyst-host]="" [analyst]=python-data [analyst-compute]=python-data [coding]=build [render]=render)
echo "| workload | image | job wall (median) | airlock run (median) | outcome |"
echo "|---|---|---:|---:|---|"
for w in analyst-host analyst analyst-compute coding render; do
  if [[ -n "${needs[$w]}" ]] && ! have "${needs[$w]}"; then
    echo "| ${w} | ${needs[$w]} | not built | | |"
    continue
  fi
  walls=(); totals=(); outcome=""
  for ((i = 0; i < reps; i++)); do
    rm -rf "${tmp}/out" "${tmp}/rec.json"
    start=$(date +%s%N)
    status=0
    # shellcheck disable=SC2086
    "$airlock" run --quiet --record "${tmp}/rec.json" --output-dir "${tmp}/out" ${cmd[$w]} >/dev/null 2>"${tmp}/err" || status=$?
    end=$(date +%s%N)
    totals+=($(( (end - start) / 1000000 )))
    if [[ ! -f "${tmp}/rec.json" ]]; then
      outcome="no record (exit ${status}: $(head -c 120 "${tmp}/err" | tr '\n' ' '))"
      walls+=(0)
      break
    fi
    read -r wall outcome < <(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["usage"]["wall_ms"], r["outcome"])' "${tmp}/rec.json")
    walls+=("$wall")
  done
  median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  echo "| ${w} | ${needs[$w]:-host} | $(median "${walls[@]}") ms | $(median "${totals[@]}") ms | ${outcome} |"
done
