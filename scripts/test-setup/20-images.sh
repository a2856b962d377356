#!/usr/bin/env bash
# The image the tests use: images/minimal.toml built into build/images (the
# store AIRLOCK_TEST_IMAGE_DIR defaults to). airlock image build skips it when
# the store's minimal was built from the same recipe digest.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
store="${AIRLOCK_TEST_IMAGE_DIR:-${repo}/build/images}"
log="${repo}/build/images-build.log"
if ! out="$("${repo}/build/airlock" image build --image-dir "$store" "${repo}/images/minimal.toml" 2>"$log")"; then
  tail -n 30 "$log" >&2
  echo "20-images: building images/minimal.toml failed (full log: ${log})" >&2
  exit 1
fi
echo "20-images: ${out}"
