# The set-up both worker privilege tests share (k8s.worker_privileges,
# k8s.oci_worker), sourced after `here` is set:
#   . "${here}/privileges_setup.sh" PREFIX TOOL...
# Skips (77) when not root or a TOOL is missing; fails when $AIRLOCK_BINARY is
# not an executable. Sets deploy, airlock (its real path), caps (the
# capabilities worker.yaml adds, lower case, comma-separated) and work (a 0711
# directory /tmp/PREFIX-XXXXXX, removed at exit), makes the host's
# /run/airlock/uids, and defines pass, fail and finish (the summary and exit).
prefix="$1"; shift
deploy="$(cd "${here}/../../deploy/kubernetes" && pwd)"
airlock="${AIRLOCK_BINARY:-}"
[[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root"; exit 77; }
for tool in "$@"; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is missing"; exit 77; }
done
[[ -x "$airlock" ]] || { echo "FAIL: AIRLOCK_BINARY is not an executable: '$airlock'"; exit 1; }
airlock="$(realpath "$airlock")"

# The capabilities the DaemonSet adds, from worker.yaml itself.
caps_line=$(grep -E '^\s*add: \[' "${deploy}/worker.yaml") || { echo "FAIL: no capabilities in worker.yaml"; exit 1; }
caps=$(echo "$caps_line" | sed -E 's/.*\[(.*)\].*/\1/; s/[" ]//g' | tr '[:upper:]' '[:lower:]')

# airlock's own lease directory on this host (it makes it itself at a job's
# start; made here first because it is bound into the pod's /run/airlock).
[[ -d /run/airlock ]] || mkdir -m 0711 /run/airlock
[[ -d /run/airlock/uids ]] || mkdir -m 0711 /run/airlock/uids

work=$(mktemp -d "/tmp/${prefix}-XXXXXX")
chmod 0711 "$work"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT

failures=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# finish NAME: "NAME: all held" and exit 0, or the count of failures and exit 1.
finish() {
  if [[ $failures -eq 0 ]]; then echo "$1: all held"; exit 0; fi
  echo "$1: ${failures} failed"
  exit 1
}
