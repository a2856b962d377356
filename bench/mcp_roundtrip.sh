#!/usr/bin/env bash
# MCP round trips (tools/list, a trivial run_code) over stdio and HTTP against
# the direct API call, medians in one run (docs/mcp.md).
#   bench/mcp_roundtrip.sh [ROUNDS]    (default 20; needs scripts/test-setup/30-mcp.sh)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ ! -d "${repo}/tests/mcp/node_modules/@modelcontextprotocol/sdk" ]]; then
  echo "run scripts/test-setup/30-mcp.sh first (installs the MCP SDK)" >&2
  exit 1
fi
AIRLOCK_BINARY="${AIRLOCK_BINARY:-${repo}/build/airlock}" exec node "${repo}/bench/mcp_roundtrip.mjs" "${1:-20}"
