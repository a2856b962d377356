#!/usr/bin/env bash
# The TypeScript SDK's tests: sdk/typescript built (its dev dependencies, pinned in
# package-lock.json, then `npm run build`: types generated from docs/openapi.json and compiled),
# and @redocly/cli for the OpenAPI lint (tests/openapi). npm ci runs only when node_modules is
# missing or older than the lock file; the build runs every time (openapi.json may have changed).
# Then the TypeScript example (examples/agent/typescript), which uses the SDK from the checkout.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

if ! command -v npm >/dev/null 2>&1; then
  echo "tssdk setup: no npm on PATH; the TypeScript SDK and OpenAPI lint tests will skip"
  exit 0
fi

installed=()
for dir in "$repo/sdk/typescript" "$repo/tests/openapi" "$repo/examples/agent/typescript"; do
  if [[ ! -f "$dir/node_modules/.package-lock.json" || "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]]; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    installed+=("${dir#"$repo"/}")
  fi
done
if ! out="$(cd "$repo/sdk/typescript" && npm run --silent build 2>&1)"; then
  echo "$out" >&2
  echo "tssdk setup: sdk/typescript does not build (does it still fit docs/openapi.json?)" >&2
  exit 1
fi
if ! out="$(cd "$repo/examples/agent/typescript" && npm run --silent build 2>&1)"; then
  echo "$out" >&2
  echo "tssdk setup: examples/agent/typescript does not build" >&2
  exit 1
fi
echo "tssdk setup: npm ci in ${installed[*]:-nothing (up to date)}; sdk/typescript and examples/agent/typescript built"
