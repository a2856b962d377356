#!/usr/bin/env bash
# Set up and build airlock and every test target (setup.sh --all), then run every test
# (unit and integration; needs root).
# Exits with ctest's status; the output ends with ctest's summary.
# AIRLOCK_SANITIZE=unit (or service) then also runs scripts/sanitize.sh with
# that argument: the tests again under ASan + UBSan, in build-asan/ (see
# docs/faults.md for what each costs); its status counts too.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

"${repo}/scripts/setup.sh" --all

# What only the tests need (scripts/test-setup/README.md).
for step in "${repo}"/scripts/test-setup/*.sh; do
  [[ -e "$step" ]] || continue
  echo "airlock test: setup step $(basename "$step")"
  bash "$step"
done

echo "airlock test: running ctest"
status=0
ctest --test-dir "${repo}/build" --output-on-failure -j1 || status=$?
if [[ -n "${AIRLOCK_SANITIZE:-}" ]]; then
  "${repo}/scripts/sanitize.sh" "$AIRLOCK_SANITIZE" || status=$?
fi
exit "$status"
