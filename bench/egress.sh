#!/usr/bin/env bash
# Egress gateway costs, measured in one run (docs/performance.md):
#  1. extra start cost of a job with one allowed destination over a job with no
#     network (/bin/true, N runs each, interleaved, through startup_bench);
#  2. throughput of a 100 MB download through the gateway (plain HTTP and a
#     CONNECT tunnel) against the same download over a direct connection.
# The upstream is a network namespace this script makes (veth, 198.18.0.0/15
# benchmarking addresses) serving a file from /dev/shm with sendfile; nothing
# outside this machine is addressed. Everything is removed at the end.
#   bench/egress.sh [N] [ROUNDS]     (default 200 start-ups, 5 download rounds)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${repo}/build"
runs="${1:-200}"
rounds="${2:-5}"
size=$((100 * 1024 * 1024))

work="$(mktemp -d /var/tmp/airlock-egress-bench-XXXXXX)"
chmod 0711 "$work"
export AIRLOCK_STATE_DIR="${work}/state"
ns="airlock-egress-bench-$$"
veth="aeb$$"
server=""
cleanup() {
  [[ -n "$server" ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  ip link del "${veth}h" 2>/dev/null || true
  rm -f "/dev/shm/airlock-egress-bench-$$"
  rm -rf "$work"
}
trap cleanup EXIT

if [[ ! -x "${build}/bench/startup_bench" ]]; then
  cmake --build "$build" --target startup_bench >/dev/null
fi

ip netns add "$ns"
ip link add "${veth}h" type veth peer name "${veth}n" netns "$ns"
ip addr add 198.19.255.249/30 dev "${veth}h"
ip link set "${veth}h" up
ip -n "$ns" addr add 198.19.255.250/30 dev "${veth}n"
ip -n "$ns" link set "${veth}n" up
ip -n "$ns" link set lo up
echo "198.19.255.250 bench.test" > "${work}/hosts"
head -c "$size" /dev/zero > "/dev/shm/airlock-egress-bench-$$"
cat > "${work}/server.py" <<'PY'
import os, socket, sys
path, port = sys.argv[1], int(sys.argv[2])
size = os.path.getsize(path)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", port))
s.listen(16)
while True:
    c, _ = s.accept()
    data = b""
    while b"\r\n\r\n" not in data:
        d = c.recv(4096)
        if not d:
            break
        data += d
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % size)
    with open(path, "rb") as f:
        c.sendfile(f)
    c.close()
PY
ip netns exec "$ns" python3 "${work}/server.py" "/dev/shm/airlock-egress-bench-$$" 8080 &
server=$!
for _ in $(seq 50); do curl -s -o /dev/null --max-time 1 http://198.19.255.250:8080/ && break; sleep 0.1; done

rule='{"host":"bench.test","port":8080,"allow_private":true}'
echo "## Egress: start-up cost ($(uname -r), $(nproc) CPUs)"
echo
"${build}/bench/startup_bench" --runs "$runs" --ratio-to "no network" \
  --case "no network" "${build}/airlock" run -- /bin/true \
  --case "one allowed destination" "${build}/airlock" run --egress-hosts "${work}/hosts" --allow-rule "$rule" -- /bin/true \
  | tee "${work}/start.md"
awk -F'|' '/^\| no network/ {base=$3} /^\| one allowed destination/ {extra=$3}
  END {if (base != "" && extra != "") printf "\nExtra start cost (median difference): %.2f ms\n", extra - base}' "${work}/start.md"

median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
curl_speed='curl -s -o /dev/null -w %{speed_download}'
direct=() plain=() tunnel=()
for _ in $(seq "$rounds"); do
  direct+=("$($curl_speed http://198.19.255.250:8080/)")
  plain+=("$("${build}/airlock" run --quiet ${AIRLOCK_BENCH_ARGS:-} --egress-hosts "${work}/hosts" --allow-rule "$rule" -- \
      $curl_speed http://bench.test:8080/)")
  tunnel+=("$("${build}/airlock" run --quiet ${AIRLOCK_BENCH_ARGS:-} --egress-hosts "${work}/hosts" --allow-rule "$rule" -- \
      $curl_speed --proxytunnel http://bench.test:8080/)")
done
d="$(printf '%s\n' "${direct[@]}" | median)"
p="$(printf '%s\n' "${plain[@]}" | median)"
t="$(printf '%s\n' "${tunnel[@]}" | median)"
echo
echo "## Egress: 100 MB download, curl, median of ${rounds} rounds (interleaved)"
echo
echo "| path | MB/s | ratio to direct |"
echo "|---|---|---|"
awk -v d="$d" -v p="$p" -v t="$t" 'BEGIN {
  printf "| direct (host -> test host) | %.0f | 1.00 |\n", d / 1048576
  printf "| gateway, plain HTTP (sandbox -> gateway -> test host) | %.0f | %.2f |\n", p / 1048576, p / d
  printf "| gateway, CONNECT tunnel | %.0f | %.2f |\n", t / 1048576, t / d
}'
