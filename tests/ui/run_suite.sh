#!/usr/bin/env bash
# The dashboard's browser tests, from ctest (tests/ui/tests.cmake). Exits 77
# (ctest: skipped) when node, chromium or puppeteer-core are missing.
set -uo pipefail
dir="$1"; file="$2"
if ! command -v node >/dev/null; then echo "SKIP: node is not installed"; exit 77; fi
if [[ ! -x /usr/lib/chromium/chromium && ! -x /usr/bin/chromium ]]; then
  echo "SKIP: chromium is not installed (run scripts/test-setup/50-ui.sh)"; exit 77
fi
if [[ ! -d "${dir}/node_modules/puppeteer-core" ]]; then
  echo "SKIP: puppeteer-core is not installed (run scripts/test-setup/50-ui.sh)"; exit 77
fi
[[ -n "${AIRLOCK_BINARY:-}" ]] && export AIRLOCK_BINARY="$(realpath -m "$AIRLOCK_BINARY")"
cd "$dir" && exec node --test --test-reporter=spec --test-concurrency=1 "$file"
