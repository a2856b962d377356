#!/usr/bin/env bash
# The dashboard's browser tests (tests/ui): Debian's chromium, and
# puppeteer-core pinned in tests/ui/package-lock.json. Installs only what is
# missing; npm ci runs only when node_modules is older than the lock file.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="${repo}/tests/ui"

if [[ ! -x /usr/lib/chromium/chromium ]]; then
  # chromium: the real browser the dashboard is tested in (test-only, not a run-time package)
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null
  did="chromium installed"
else
  did="chromium present"
fi

if ! command -v npm >/dev/null; then
  echo "50-ui: ${did}; npm is missing, the dashboard tests will be skipped"
  exit 0
fi
stamp="${dir}/node_modules/.package-lock.json"
if [[ -f "$stamp" && "$stamp" -nt "${dir}/package-lock.json" ]]; then
  echo "50-ui: ${did}; tests/ui: node_modules up to date"
  exit 0
fi
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
echo "50-ui: ${did}; tests/ui: npm ci done"
