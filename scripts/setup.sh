#!/usr/bin/env bash
# Install what airlock needs on Debian 12 (bookworm) and build it into build/.
# Idempotent: installs only missing packages and runs `apt-get update` only then.
# Run as root.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${repo}/build"

packages=(
  cmake g++ make pkg-config
  libseccomp-dev libssl-dev nlohmann-json3-dev libboost-dev libsqlite3-dev libtoml11-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  python3 libpython3-stdlib libpython3.11 python3-numpy python3-pandas python3-matplotlib
  bubblewrap util-linux iproute2 procps openssl curl
  slowhttptest
  # airlock image build: Debian roots from recipes, packed as erofs images (docs/images.md)
  mmdebstrap erofs-utils
  # the pdf check's reader (pdfinfo, pdftotext), run in a sandbox on the host image
  poppler-utils
  # the archive and office checks: libarchive, run in a confined child (docs/checks.md)
  libarchive-dev
)

missing=()
for p in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if (( ${#missing[@]} > 0 )); then
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "airlock setup: missing packages (${missing[*]}); run as root" >&2
    exit 1
  fi
  echo "airlock setup: installing ${#missing[@]} packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "airlock setup: all ${#packages[@]} packages present"
fi

echo "airlock setup: building in ${build}"
mkdir -p "$build"
log="${build}/setup.log"
if ! { cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
       cmake --build "$build" -j"$(nproc)"; } >"$log" 2>&1; then
  { grep -E -B1 -A3 'error|undefined reference' "$log" | head -n 80; echo "..."; tail -n 15 "$log"; } >&2
  echo "airlock setup: build failed (full log: ${log})" >&2
  exit 1
fi
echo "airlock setup: done (${build}/airlock)"
