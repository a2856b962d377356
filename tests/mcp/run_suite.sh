#!/usr/bin/env bash
# One node test file of the MCP suite, from ctest (tests/mcp/tests.cmake).
# Exits 77 (ctest: skipped) when node or the pinned clients are missing.
set -uo pipefail
dir="$1"; file="$2"
if ! command -v node >/dev/null; then echo "SKIP: node is not installed"; exit 77; fi
if [[ ! -d "${dir}/node_modules/@modelcontextprotocol/sdk" ]]; then
  echo "SKIP: the MCP clients are not installed (run scripts/test-setup/30-mcp.sh)"; exit 77
fi
[[ -n "${AIRLOCK_BINARY:-}" ]] && export AIRLOCK_BINARY="$(realpath -m "$AIRLOCK_BINARY")"
cd "$dir" && exec node --test --test-reporter=spec "$file"
