#!/usr/bin/env bash
# Start-up cost of a trivial job: /bin/true via plain fork+exec, `unshare`, `bwrap` and
# `airlock run`, N runs each (default 200), rounds interleaved, in one process.
# Prints a Markdown table with median, p90, p99 and ratios against bwrap and unshare.
#   bench/startup.sh [N]
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${repo}/build"
runs="${1:-200}"

# airlock keeps a record per job in its state directory; use a private one, removed at the end.
AIRLOCK_STATE_DIR="$(mktemp -d /var/tmp/airlock-bench-XXXXXX)"
chmod 0711 "$AIRLOCK_STATE_DIR"  # the sandbox's user passes through it
export AIRLOCK_STATE_DIR
trap 'rm -rf "$AIRLOCK_STATE_DIR"' EXIT

if [[ ! -x "${build}/bench/startup_bench" ]]; then
  cmake --build "$build" --target startup_bench >/dev/null
fi

cases=(
  --case "fork+exec" /bin/true
  --case "unshare" unshare -Urpnmf true
  --case "bwrap" bwrap --unshare-all --die-with-parent --ro-bind /usr /usr
      --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin
      --proc /proc --dev /dev --tmpfs /tmp -- /bin/true
)
if probe="$("${build}/airlock" run -- /bin/true 2>&1 >/dev/null)"; then
  cases+=(--case "airlock run" "${build}/airlock" run -- /bin/true)
else
  note="Note: \`${build}/airlock run -- /bin/true\` did not succeed here; airlock was left out: ${probe}"
fi

echo "## Start-up: /bin/true ($(uname -r), $(nproc) CPUs)"
echo
status=0
"${build}/bench/startup_bench" --runs "$runs" --ratio-to bwrap --ratio-to unshare "${cases[@]}" || status=$?
if [[ -n "${note:-}" ]]; then
  echo
  echo "$note"
fi
exit "$status"
