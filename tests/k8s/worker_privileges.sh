#!/usr/bin/env bash
# k8s.worker_privileges: the worker's privileges of deploy/kubernetes/worker.yaml,
# tried on this host. A private mount namespace is set up the way a container
# runtime sets up a container (/proc/sys read-only, /proc files masked with
# /dev/null, the cgroup mounts read-only, a read-only root with the pod's
# volumes writable) and airlock runs with a capability bounding set of exactly
# the capabilities the DaemonSet adds. Asserted:
# - without scripts/prepare-worker.sh every sandbox fails, for the reason the
#   README gives (read-only cgroups; then the kernel refusing the sandbox's /proc);
# - with it, jobs succeed, the service's selftest holds (with the ConfigMap's
#   warm pool), a session runs, and a job does not see the worker's unmasked /proc;
# - SYS_ADMIN, SETUID and SETGID are each needed: without one, the documented
#   failure; without SYS_NICE a pooled job still succeeds, at the pool's nice.
# Not covered here: airlock on cgroup v2 (this host's controllers are on v1;
# only the script's v2 steps are tried),
# the runtime's seccomp and AppArmor profiles, a real kubelet.
# Exits 77 (skipped) when not root or a tool is missing.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "${here}/../.." && pwd)"
. "${here}/privileges_setup.sh" airlock-k8s-priv unshare setpriv mountpoint
[[ "$caps" == "sys_admin,setuid,setgid,sys_nice" ]] || { echo "FAIL: worker.yaml adds '$caps'; this test knows sys_admin,setuid,setgid,sys_nice"; exit 1; }
tmp="$work"

# The pod's writable volumes (worker.yaml): /run/airlock (with the node's
# /run/airlock/uids inside it, shared with every airlock on the host),
# /var/lib/airlock and /tmp. Everything else is read-only, as with
# readOnlyRootFilesystem.
mkdir -m 0711 "$tmp/state" "$tmp/run" "$tmp/run/uids"
mkdir -m 1777 "$tmp/tmp"
# The pod's /var/lib/airlock is bound over the host's directory of that name,
# which a fresh host may not have (only an `airlock run` without --state-dir
# makes it): made here when missing (empty, 0711, as airlock makes it) and
# removed at the end if this test made it, so the test needs nothing of the host.
made_state_mountpoint=0
if [[ ! -d /var/lib/airlock ]]; then
  mkdir -m 0711 /var/lib/airlock && made_state_mountpoint=1
fi
trap 'cleanup; if (( made_state_mountpoint )); then rmdir /var/lib/airlock; fi' EXIT

# What a runtime does to a container, then "$@" under the bounding set $1.
# $2: "ro-cgroups" or "rw-cgroups" (to see the /proc failure by itself).
# At most 120 s: timeout then kills its process group (what ran inside too).
container() {
  local bounding="$1" cgroups="$2"; shift 2
  timeout -k 5 120 unshare -m --propagation private bash -c '
    set -e
    tmp="$2"
    mount --bind /run/airlock/uids "$tmp/run/uids"
    mount --rbind "$tmp/run" /run/airlock
    mount --bind "$tmp/state" /var/lib/airlock
    # A checkout under /tmp (a clone made there) would vanish under the
    # pod'"'"'s /tmp: it is bound into that /tmp at the same path first.
    case "$3" in /tmp/*)
      mkdir -p "$tmp/tmp${3#/tmp}" && mount --bind "$3" "$tmp/tmp${3#/tmp}" ;;
    esac
    mount --rbind "$tmp/tmp" /tmp
    mount -o remount,bind,ro /
    mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys
    for f in /proc/timer_list /proc/sched_debug /proc/kcore /proc/keys; do
      [ -e "$f" ] && mount --bind /dev/null "$f"
    done
    if [ "$1" = ro-cgroups ]; then
      for m in $(awk '"'"'{for(i=7;i<=NF;i++) if($i=="-") break; if($(i+1)=="cgroup"||$(i+1)=="cgroup2") print $5}'"'"' /proc/self/mountinfo); do
        mount -o remount,bind,ro "$m"
      done
    fi
    shift 3
    exec setpriv --bounding-set "$0" --inh-caps -all --ambient-caps -all -- "$@"
  ' "$bounding" "$cgroups" "$tmp" "$repo" "$@"
}
all="-all,+${caps//,/,+}"
job=("$airlock" run --state-dir /var/lib/airlock)

# 1. Without the preparation: the container's read-only cgroups stop the sandbox.
out=$(container "$all" ro-cgroups "${job[@]}" -- /bin/true 2>&1)
if [[ $? -ne 0 && "$out" == *"sandbox_error"*"Read-only file system"* ]]; then
  pass "without prepare-worker.sh: sandbox_error, the cgroup is read-only"
else
  fail "without prepare-worker.sh (read-only cgroups) the job did not fail as expected: $out"
fi

# 2. Writable cgroups but the runtime's masked /proc: the kernel refuses the sandbox's /proc.
out=$(container "$all" rw-cgroups "${job[@]}" -- /bin/true 2>&1)
if [[ $? -ne 0 && "$out" == *"sandbox_error"*"mount /proc: Operation not permitted"* ]]; then
  pass "masked /proc: sandbox_error, mount /proc: Operation not permitted"
else
  fail "with the runtime's masked /proc the job did not fail as expected: $out"
fi

# 3. With the preparation and exactly the four capabilities: the job runs, in a
#    /proc of its own, and cannot reach the worker's unmasked /proc.
probe='test "$(cat /proc/1/comm)" != systemd && test ! -e '"$tmp"'/proc && ls /proc | grep -c "^[0-9]"'
out=$(container "$all" ro-cgroups /bin/sh "${deploy}/scripts/prepare-worker.sh" "${job[@]}" -- /bin/sh -c "$probe" 2>&1)
if [[ $? -eq 0 && "$out" == *"succeeded"* ]]; then
  pids=$(echo "$out" | grep -E '^[0-9]+$' | head -1)
  # init, sh, ls and grep: a handful, where the host has hundreds.
  if [[ -n "$pids" && "$pids" -lt 10 ]]; then
    pass "prepared, four capabilities: the job succeeded and its /proc shows $pids process(es), not the worker's"
  else
    fail "the job's /proc showed '$pids' processes: $out"
  fi
else
  fail "prepared, with sys_admin,setuid,setgid the job did not succeed: $out"
fi

# 4. The whole service path (airlock serve in the same container, on the
#    ConfigMap's configuration: a warm pool too): its selftest holds.
cp "${deploy}/config/airlock.toml" "$tmp/tmp/airlock.toml"
out=$(container "$all" ro-cgroups /bin/sh "${deploy}/scripts/prepare-worker.sh" "$airlock" selftest --config /tmp/airlock.toml 2>&1)
if [[ $? -eq 0 && "$out" == *" 0 broken"*"PASS"* ]]; then
  pass "prepared, four capabilities: airlock selftest $(echo "$out" | tail -1)"
else
  fail "airlock selftest in the simulated container: $(echo "$out" | grep -E 'BROKEN|answer|PASS|FAIL' | head -6)"
fi

# 4b. A session (its sandbox lives across calls, its Python kernel forks) on
#     airlock serve in the same container: Python and a shell call, then close.
out=$(container "$all" ro-cgroups /bin/sh "${deploy}/scripts/prepare-worker.sh" /bin/sh "${here}/session_probe.sh" "$airlock" 2>&1)
if [[ "$out" == *"uid 1000 42"*"shell-ok"*"closed "* ]]; then
  pass "prepared, four capabilities: a session ran Python and a shell call and closed"
else
  fail "a session in the simulated container: $out"
fi

# 5. Each capability but SYS_NICE is needed. SETUID and SETGID are left out of the bounding
#    set; SYS_ADMIN is dropped after the preparation (which needs it itself), so
#    that step keeps SETPCAP to drop it (dropping from the bounding set needs it).
declare -A reason=(
  [sys_admin]="fsopen tmpfs: Operation not permitted"
  [setuid]="uid_map: Operation not permitted"
  [setgid]="gid_map: Operation not permitted"
)
for cap in sys_admin setuid setgid; do
  if [[ $cap == sys_admin ]]; then
    out=$(container "${all},+setpcap" ro-cgroups /bin/sh "${deploy}/scripts/prepare-worker.sh" \
          setpriv --bounding-set -sys_admin,-setpcap -- "${job[@]}" -- /bin/true 2>&1)
  else
    out=$(container "$(echo "$all" | sed "s/,+${cap}//")" ro-cgroups /bin/sh "${deploy}/scripts/prepare-worker.sh" \
          "${job[@]}" -- /bin/true 2>&1)
  fi
  if [[ $? -ne 0 && "$out" == *"sandbox_error"*"${reason[$cap]}"* ]]; then
    pass "without ${cap}: sandbox_error, ${reason[$cap]}"
  else
    fail "without ${cap} the job did not fail with '${reason[$cap]}': $out"
  fi
done

# SYS_NICE (optional): a warm pool's sandboxes are made at nice 10, and a taken
# one is set back to its taker's priority: a process of another uid. `airlock
# pool` and jobs that take only a warm sandbox (retried until the pool has one
# ready), which print their own nice value. With it: the taker's. Without it the
# job still succeeds, at the pool's nice 10, and airlock says why once.
taker_nice=$(nice)
cat > "$tmp/tmp/warm.sh" <<'EOS'
airlock="$1"
"$airlock" pool --state-dir /var/lib/airlock --warm 1 --preloaded 0 > /tmp/pool.log 2>&1 &
pool=$!
for _ in $(seq 100); do
  "$airlock" run --state-dir /var/lib/airlock --start warm -- \
    /bin/sh -c 'echo "job nice $(cut -d" " -f19 /proc/self/stat)"' > /tmp/warm.log 2>&1 && break
  grep -q "priority" /tmp/warm.log && break
  sleep 0.1
done
cat /tmp/warm.log
kill "$pool"
wait "$pool"
EOS
for with in yes no; do
  bounding="$all"
  [[ $with == no ]] && bounding=$(echo "$all" | sed "s/,+sys_nice//")
  out=$(container "$bounding" ro-cgroups /bin/sh "${deploy}/scripts/prepare-worker.sh" /bin/sh /tmp/warm.sh "$airlock" 2>&1)
  warned=$(echo "$out" | grep -c "no CAP_SYS_NICE")
  if [[ $with == yes && "$out" == *"job nice ${taker_nice}"*"succeeded"* && $warned -eq 0 ]]; then
    pass "with sys_nice: a job took a warm sandbox, ran at its taker's nice ${taker_nice} and succeeded"
  elif [[ $with == no && "$out" == *"cannot be set back to nice ${taker_nice} (no CAP_SYS_NICE)"*"job nice 10"*"succeeded"* && $warned -eq 1 ]]; then
    pass "without sys_nice: a job took a warm sandbox and succeeded at the pool's nice 10, said once"
  else
    fail "warm pool, sys_nice $with: $out"
  fi
done

# 6. The preparation itself needs SYS_ADMIN and says so.
out=$(container "-all,+setuid,+setgid,+sys_nice" ro-cgroups /bin/sh "${deploy}/scripts/prepare-worker.sh" /bin/true 2>&1)
if [[ $? -eq 125 && "$out" == *"cannot mount an unmasked /proc"* ]]; then
  pass "prepare-worker.sh without sys_admin: refused with its reason"
else
  fail "prepare-worker.sh without sys_admin: $out"
fi

# 7. cgroup v2 (only the script: this host's controllers are on v1). A cgroup2
#    mounted read-only in a new cgroup namespace, as a runtime mounts it: the
#    script makes it writable and moves itself into the leaf "service".
mkdir "$tmp/cg2"
out=$(unshare -m -C --propagation private sh -c '
  mount -t cgroup2 none "$1/cg2" && mount -o remount,bind,ro "$1/cg2"
  AIRLOCK_UNMASKED_PROC="$1/run/proc2" AIRLOCK_CGROUP_ROOT="$1/cg2" sh "$2/scripts/prepare-worker.sh" grep "^0::" /proc/self/cgroup
  status=$?
  rmdir "$1/cg2/service"
  exit $status' sh "$tmp" "$deploy" 2>&1)
if [[ $? -eq 0 && "$out" == "0::/service" ]]; then
  pass "cgroup v2: the read-only mount made writable, the worker moved into /service"
else
  fail "cgroup v2: $out"
fi

# Nothing of the jobs is left: no cgroup of theirs (their ids are in the records).
for rec in "$tmp"/state/records/*.json; do
  [[ -e "$rec" ]] || continue
  id=$(basename "$rec" .json)
  if find /sys/fs/cgroup -maxdepth 4 -type d -name "$id" 2>/dev/null | grep -q .; then
    fail "a cgroup of job $id is left"
  fi
done

finish "worker privileges"
