#!/usr/bin/env bash
# The MCP test clients (tests/mcp, examples/agent/mcp): the official SDK, the
# inspector CLI and the conformance suite, pinned in package-lock.json.
# Installs only when node_modules does not match the lock file.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
for dir in "${repo}/tests/mcp" "${repo}/examples/agent/mcp"; do
  [[ -f "${dir}/package-lock.json" ]] || continue
  if ! command -v npm >/dev/null; then
    echo "30-mcp: npm is missing; the MCP tests will be skipped"
    exit 0
  fi
  stamp="${dir}/node_modules/.package-lock.json"
  # npm writes node_modules/.package-lock.json at every install: newer than
  # the lock file means the tree was installed from it.
  if [[ -f "$stamp" && "$stamp" -nt "${dir}/package-lock.json" ]]; then
    echo "30-mcp: ${dir#"${repo}/"}: node_modules up to date"
    continue
  fi
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  echo "30-mcp: ${dir#"${repo}/"}: npm ci done"
done
