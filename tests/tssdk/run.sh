#!/bin/sh
# Runs one test file of the TypeScript SDK with node's test runner; exits 77 (ctest: skipped)
# when node or the built SDK (scripts/test-setup/30-tssdk.sh) is missing.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v node >/dev/null 2>&1; then
  echo "SKIP: no node on PATH"
  exit 77
fi
if [ ! -f "$here/../../sdk/typescript/dist/index.js" ]; then
  echo "SKIP: the TypeScript SDK is not built (run scripts/test-setup/30-tssdk.sh)"
  exit 77
fi
exec node --test --test-reporter=spec "$@"
