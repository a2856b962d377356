#!/usr/bin/env bash
# k8s.oci_worker: the worker of deploy/kubernetes/worker.yaml in a real OCI
# container, made by runc (the runtime under containerd and CRI-O) from
# `runc spec` with the DaemonSet's settings (tests/k8s/oci_bundle.py): runc's
# masked and read-only /proc paths, a read-only /sys/fs/cgroup in a cgroup
# namespace, a read-only root, the pod's volumes, exactly the DaemonSet's
# capabilities. Asserted:
# - without prepare-worker.sh the sandbox fails (read-only cgroups);
# - with it a job runs (its payload with no capability), the selftest holds
#   on the ConfigMap's configuration, and a session runs;
# - Docker's default seccomp profile, converted for these capabilities as the
#   runtimes do, stops the sandbox at pivot_root; with pivot_root added the
#   selftest holds (the Localhost profile README.md describes). These two
#   cases need Docker's profile from Debian's golang-github-docker-docker-dev,
#   which the test setup does not install (339 packages with its dependencies):
#   they are skipped, saying so, where it is missing.
# Exits 77 (skipped) when not root or runc/python3 are missing
# (scripts/test-setup/60-k8s.sh installs them).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "${here}/../.." && pwd)"
profile="${DOCKER_SECCOMP_PROFILE:-/usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json}"
. "${here}/privileges_setup.sh" airlock-k8s-oci runc python3

# A container of its own for "$@", with oci_bundle.py options before "--";
# deleted (and its cgroup checked) when it ends.
container() {
  local name bundle
  bundle=$(mktemp -d "$work/airlock-k8s-XXXXXX") || return 1
  name=$(basename "$bundle")
  (cd "$bundle" && runc spec) || return 1
  local opts=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do opts+=("$1"); shift; done
  shift
  python3 "${here}/oci_bundle.py" "$bundle" "$caps" --bind "$repo" --bind "$(dirname "$airlock")" --bind "$work/conf" "${opts[@]}" -- "$@" || return 1
  timeout -k 5 120 runc run --bundle "$bundle" "$name"
  local status=$?
  runc delete -f "$name" >/dev/null 2>&1
  # runc removes the container's cgroups; give a dying process a moment to go.
  local left=""
  for _ in $(seq 30); do
    left=$(find /sys/fs/cgroup -maxdepth 2 -type d -name "$name" 2>/dev/null)
    [[ -z "$left" ]] && break
    sleep 0.1
  done
  if [[ -n "$left" ]]; then
    echo "LEFT: the cgroup of container $name: $left"
    for d in $left; do find "$d" -depth -type d -exec rmdir {} + 2>/dev/null; done
  fi
  return $status
}
prepare=(/bin/sh "${deploy}/scripts/prepare-worker.sh")
mkdir -m 0755 "$work/conf"
cp "${deploy}/config/airlock.toml" "$work/conf/airlock.toml"

out=$(container -- "$airlock" run -- /bin/true 2>&1)
if [[ $? -ne 0 && "$out" == *"sandbox_error"*"Read-only file system"* && "$out" != *LEFT* ]]; then
  pass "runc, without prepare-worker.sh: sandbox_error, the cgroup is read-only"
else
  fail "runc, without prepare-worker.sh: $out"
fi

out=$(container -- "${prepare[@]}" "$airlock" run -- /bin/sh -c 'grep CapEff /proc/self/status' 2>&1)
if [[ $? -eq 0 && "$out" == *"CapEff:	0000000000000000"*"succeeded"* && "$out" != *LEFT* ]]; then
  pass "runc, prepared, ${caps}: the job succeeded, its payload holds no capability"
else
  fail "runc, prepared: $out"
fi

out=$(container -- "${prepare[@]}" "$airlock" selftest --config "$work/conf/airlock.toml" 2>&1)
if [[ $? -eq 0 && "$out" == *" 0 broken"*"PASS"* && "$out" != *LEFT* ]]; then
  pass "runc, prepared: airlock selftest $(echo "$out" | tail -1)"
else
  fail "runc, prepared, selftest: $(echo "$out" | grep -E 'BROKEN|answer|PASS|FAIL|LEFT' | head -6)"
fi

# A session (its kernel keeper forks and execs) on airlock serve in the container.
out=$(container -- "${prepare[@]}" /bin/sh "${here}/session_probe.sh" "$airlock" 2>&1)
if [[ "$out" == *"uid 1000 42"*"shell-ok"*"closed "* && "$out" != *LEFT* ]]; then
  pass "runc, prepared: a session ran a Python and a shell call and closed"
else
  fail "runc, prepared, a session: $out"
fi

if [[ -f "$profile" ]]; then
  out=$(container --seccomp "$profile" -- "${prepare[@]}" "$airlock" run -- /bin/true 2>&1)
  if [[ $? -ne 0 && "$out" == *"sandbox_error"*"pivot_root into the sandbox root: Operation not permitted"* ]]; then
    pass "runc, Docker's default seccomp profile: sandbox_error, pivot_root denied"
  else
    fail "runc, Docker's default seccomp profile: $out"
  fi
  out=$(container --seccomp "$profile" --allow pivot_root -- "${prepare[@]}" "$airlock" selftest --config "$work/conf/airlock.toml" 2>&1)
  if [[ $? -eq 0 && "$out" == *" 0 broken"*"PASS"* && "$out" != *LEFT* ]]; then
    pass "runc, Docker's default seccomp profile plus pivot_root: airlock selftest $(echo "$out" | tail -1)"
  else
    fail "runc, default profile plus pivot_root: $(echo "$out" | grep -E 'BROKEN|answer|PASS|FAIL|LEFT' | head -6)"
  fi
else
  echo "skipped: the seccomp cases ($profile is missing: Debian's golang-github-docker-docker-dev)"
fi

finish "oci worker"
