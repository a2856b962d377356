#!/usr/bin/env bash
# The offline Kubernetes manifest checkers of tests/k8s (kubernetes-models,
# kubernetes-types, typescript, yaml), pinned in tests/k8s/package-lock.json.
# Installs only when node_modules does not match the lock file.
set -euo pipefail

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
