#!/usr/bin/env bash
# One node test file of the k8s suite, from ctest (tests/k8s/tests.cmake).
# Exits 77 (ctest: skipped) when node or the pinned checkers are missing.
set -uo pipefail
dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"; file="$1"
if ! command -v node >/dev/null; then echo "SKIP: node is not installed"; exit 77; fi
if [[ ! -d "${dir}/node_modules/kubernetes-models" || ! -d "${dir}/node_modules/typescript" ]]; then
  echo "SKIP: the manifest checkers are not installed (run scripts/test-setup/60-k8s.sh)"; exit 77
fi
if [[ -n "${AIRLOCK_BINARY:-}" ]]; then AIRLOCK_BINARY="$(realpath -m "$AIRLOCK_BINARY")"; export AIRLOCK_BINARY; fi
cd "$dir" && exec node --test --test-reporter=spec "$file"
