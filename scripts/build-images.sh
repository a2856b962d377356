#!/usr/bin/env bash
# Build image recipes into a store: scripts/build-images.sh STORE [NAME...]
# (default: python-data build render). Each is skipped when the store's
# image of that name was built from the same recipe digest. Prints each
# build's time and size, and a summary table at the end.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
airlock="${AIRLOCK:-${repo}/build/airlock}"
if (( $# < 1 )); then
  echo "usage: scripts/build-images.sh STORE [NAME...]" >&2
  exit 125
fi
store="$1"
shift
names=("$@")
(( ${#names[@]} > 0 )) || names=(python-data build render)
[[ -x "$airlock" ]] || { echo "build-images: no airlock binary at ${airlock} (run scripts/setup.sh)" >&2; exit 1; }

status=0
summary=""
for name in "${names[@]}"; do
  recipe="${repo}/images/${name}.toml"
  [[ -f "$recipe" ]] || { echo "build-images: no recipe ${recipe}" >&2; status=1; continue; }
  echo "build-images: ${name}"
  start=$(date +%s)
  if out="$("$airlock" image build --image-dir "$store" --json "$recipe")"; then
    end=$(date +%s)
    line="$(printf '%s' "$out" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print("%-12s %s %8.1f MiB  tree %8.1f MiB  %s" % (j["name"], j["digest"][:19], j["size"] / 2**20,
      j["tree_bytes"] / 2**20, "reused" if j["reused"] else "built in %.0f s" % j["seconds"]))')"
    echo "build-images: ${line} (wall $((end - start)) s)"
    summary+="${line}"$'\n'
  else
    echo "build-images: ${name} failed" >&2
    status=1
  fi
done
printf '%s' "$summary"
exit "$status"
