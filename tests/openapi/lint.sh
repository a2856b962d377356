#!/bin/sh
# Lints docs/openapi.json with @redocly/cli (installed by scripts/test-setup/30-tssdk.sh) under
# docs/redocly.yaml. Fails on any error or warning; exits 77 (ctest: skipped) without the tool.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
redocly="$here/node_modules/.bin/redocly"
if [ ! -x "$redocly" ]; then
  echo "SKIP: @redocly/cli is not installed (run scripts/test-setup/30-tssdk.sh)"
  exit 77
fi
# No telemetry, no update check: the test reaches nothing outside this machine.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
out="$("$redocly" lint "$repo/docs/openapi.json" --config "$repo/docs/redocly.yaml" --format=stylish 2>&1)" || {
  echo "$out"
  exit 1
}
echo "$out" | grep -v '[║═╔╚]'
if echo "$out" | grep -Eq '[0-9]+ warnings?\.|warning '; then
  echo "FAIL: redocly lint reports warnings"
  exit 1
fi
