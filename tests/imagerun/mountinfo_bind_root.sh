#!/bin/bash
# proc_mountinfo_host_paths from inside a bind-mounted root: airlock runs in
# a mount namespace whose / is a directory deep inside a tmpfs (as on a host
# whose root is a chroot or a bind-mounted directory), so the host's /usr is
# not at the root of its filesystem. On `host` the case must find host paths
# (this proves the test can fail); on the image it must find none.
#   tests/imagerun/mountinfo_bind_root.sh AIRLOCK SOURCE_DIR IMAGE_DIR
# Exits 77 (skipped) when the image `minimal` is not in IMAGE_DIR.
set -euo pipefail
airlock=$1 src=$2 store=$3
[ -e "$store/names/minimal" ] || { echo "SKIP: the image 'minimal' is not built in $store"; exit 77; }
case_file="$src/tests/hostile/cases/proc_mountinfo_host_paths.py"
work=$(mktemp -d /tmp/airlock-bindroot-XXXXXX)
trap 'rm -rf "$work"' EXIT

run_in_bind_root() {  # IMAGE -> the job record on stdout
  unshare -m --propagation private bash -s "$1" <<'INNER'
set -euo pipefail
image=$1
mount -t tmpfs -o size=512m tmpfs "$work"
root="$work/deep/root"
mkdir -p "$root"/{usr/bin,usr/lib,etc,proc,dev,sys,run,tmp,opt/lib,opt/bin,opt/store,opt/case,oldroot}
# A root of its own: python3 and its libraries copied from the host (a plain
# directory of the tmpfs, not a mount), airlock and its libraries bound in.
cp -a /usr/lib/python3.11 "$root/usr/lib/"
cp /usr/bin/python3.11 "$root/usr/bin/"; ln -s python3.11 "$root/usr/bin/python3"
mkdir -p "$root/usr/lib/x86_64-linux-gnu" "$root/usr/lib64"
for lib in $(ldd /usr/bin/python3.11 | grep -o '/[^ ]*'); do cp -L "$lib" "$root$lib" 2>/dev/null || cp -L "$lib" "$root/usr$lib"; done
for m in "$root"/usr/lib/python3.11/lib-dynload/*.so; do
  for lib in $(ldd "$m" 2>/dev/null | grep -o '/usr/lib/[^ ]*'); do [ -e "$root$lib" ] || cp -L "$lib" "$root$lib"; done
done
for l in bin lib sbin; do ln -s usr/$l "$root/$l"; done
ln -s usr/lib64 "$root/lib64"
mkdir -p "$root/usr/sbin"
cp /etc/ld.so.cache "$root/etc/" 2>/dev/null || true
mount --bind "$root" "$root"
for d in proc dev sys; do mount --rbind /$d "$root/$d"; done
mount -t tmpfs tmpfs "$root/run"; mount -t tmpfs -o mode=0711 tmpfs "$root/tmp"
mount --bind /usr/lib/x86_64-linux-gnu "$root/opt/lib"
touch "$root/opt/bin/airlock"; mount --bind "$airlock" "$root/opt/bin/airlock"
mount --bind "$store" "$root/opt/store"
mount --bind "$(dirname "$case_file")" "$root/opt/case"
mkdir -m 0711 "$root/tmp/state"
cd "$root"; pivot_root . oldroot; cd /
/opt/lib/ld-linux-x86-64.so.2 --library-path /opt/lib /oldroot/usr/bin/umount -l /oldroot
exec /opt/lib/ld-linux-x86-64.so.2 --library-path /opt/lib /opt/bin/airlock run --json --state-dir /tmp/state \
  --image "$image" --image-dir /opt/store --input /opt/case/proc_mountinfo_host_paths.py -- python3 /inputs/proc_mountinfo_host_paths.py
INNER
}
export airlock store case_file work
fail=0
host=$(run_in_bind_root host || true)
image=$(run_in_bind_root minimal || true)
if ! grep -q 'ESCAPED host paths in mountinfo' <<<"$host"; then
  echo "FAIL: on host the case found no host path in a bind-mounted root (the test cannot fail): $host"; fail=1
fi
if ! grep -q 'BLOCKED no host paths in mountinfo' <<<"$image"; then
  echo "FAIL: on the image the sandbox's mountinfo shows host paths: $image"; fail=1
fi
grep -q '"name": *"minimal"' <<<"$image" || { echo "FAIL: the job did not run on minimal: $image"; fail=1; }
[ $fail = 0 ] && echo "PASS: host leaks $(grep -o 'ESCAPED host paths in mountinfo: [0-9]*' <<<"$host"); the image none"
exit $fail
