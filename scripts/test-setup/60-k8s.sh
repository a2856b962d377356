#!/usr/bin/env bash
# tests/k8s: Debian's runc (the worker in a real OCI container); then the
# offline manifest checkers
# (kubernetes-models, kubernetes-types, typescript, yaml), pinned in
# tests/k8s/package-lock.json, installed only when node_modules does not match it.
set -euo pipefail

need=()
for p in runc; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
  echo "60-k8s: installed ${need[*]}"
fi

dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/k8s"
if ! command -v npm >/dev/null; then
  echo "60-k8s: npm is missing; the k8s tests will be skipped"
  exit 0
fi
stamp="${dir}/node_modules/.package-lock.json"
# npm writes node_modules/.package-lock.json at every install: newer than the
# lock file means the tree was installed from it.
if [[ -f "$stamp" && "$stamp" -nt "${dir}/package-lock.json" ]]; then
  echo "60-k8s: tests/k8s: node_modules up to date"
  exit 0
fi
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
echo "60-k8s: tests/k8s: npm ci done"
