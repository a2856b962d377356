#!/bin/sh
# Prepares a worker container for airlock's sandboxes, then runs "$@".
# Needs CAP_SYS_ADMIN and no AppArmor confinement (deploy/kubernetes/README.md).
# Two things the container runtime sets up would stop every sandbox:
# 1. The runtime masks parts of /proc (kcore, timer_list, ...) and binds
#    /proc/sys read-only. The kernel lets a new user namespace mount a fresh
#    /proc only where a fully visible proc is already mounted, so the sandbox's
#    own /proc would fail (EPERM). A second proc mount, unmasked, at a path of
#    the worker's own satisfies the kernel; the container's /proc stays as the
#    runtime made it, and jobs see neither (they get a fresh /proc of their pid
#    namespace in a root of their own).
# 2. The container's cgroup is mounted read-only. Remounting it read-write
#    gives the worker its own subtree only (a cgroup namespace on cgroup v2, the
#    container's directory bound on v1). On cgroup v2 a group that hands
#    controllers to children may hold no process itself, so the worker moves
#    into a leaf, "service", before airlock enables memory, pids and cpu for
#    the jobs' groups.
set -eu

proc_dir=${AIRLOCK_UNMASKED_PROC:-/run/airlock/proc}
cgroup_root=${AIRLOCK_CGROUP_ROOT:-/sys/fs/cgroup}

die() { echo "prepare-worker.sh: $*" >&2; exit 125; }

mkdir -p "$proc_dir"
if ! mountpoint -q "$proc_dir"; then
  mount -t proc -o nosuid,nodev,noexec proc "$proc_dir" ||
    die "cannot mount an unmasked /proc at $proc_dir (needs CAP_SYS_ADMIN and AppArmor unconfined)"
fi

# Every cgroup mount at or beneath the root, from mountinfo (the fstype is the
# field after the " - " separator; mount points escape spaces as \040).
cgroup_mounts=$(awk -v root="$cgroup_root" '{
  for (i = 7; i <= NF; i++) if ($i == "-") break
  if (($(i+1) == "cgroup" || $(i+1) == "cgroup2") && ($5 == root || index($5, root "/") == 1)) print $5
}' /proc/self/mountinfo)
[ -n "$cgroup_mounts" ] || die "no cgroup mount under $cgroup_root"
for m in $cgroup_mounts; do
  mount -o remount,bind,rw "$m" || die "cannot make $m writable"
done

if [ "$(stat -f -c %T "$cgroup_root")" = cgroup2fs ]; then
  mkdir -p "$cgroup_root/service"
  echo $$ > "$cgroup_root/service/cgroup.procs" || die "cannot move into $cgroup_root/service"
fi

exec "$@"
