#!/usr/bin/env bash
# Set up and build airlock, then run every test (unit and integration; needs root).
# Exits with ctest's status; the output ends with ctest's summary.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

"${repo}/scripts/setup.sh"

echo "airlock test: running ctest"
status=0
ctest --test-dir "${repo}/build" --output-on-failure -j1 || status=$?
exit "$status"
