#!/usr/bin/env bash
# Install what airlock needs on Debian 12 (bookworm) and build it into build/.
# Idempotent: installs only missing packages and runs `apt-get update` only then.
# Run as root.
#
#   scripts/setup.sh          the quick start: `build_packages` and `packages`, and only the
#                             airlock binary (the run packages install while it builds)
#   scripts/setup.sh --all    scripts/test.sh: `test_packages` too, and every target
#                             (unit and integration tests, fuzz replays, benchmarks)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${repo}/build"
all=0
case "${1:-}" in
  "") ;;
  --all) all=1 ;;
  *) echo "usage: scripts/setup.sh [--all]" >&2; exit 2 ;;
esac

# What building airlock needs; the build starts as soon as these are installed.
build_packages=(
  cmake g++ make ninja-build pkg-config
  libseccomp-dev libssl-dev nlohmann-json3-dev libboost-dev libsqlite3-dev libtoml11-dev
  # the archive and office checks: libarchive, run in a confined child (docs/checks.md)
  libarchive-dev
  libpq-dev  # the PostgreSQL store: libpq's header to build; libpq5 is dlopened only with a database_url (docs/store.md)
)

# What running airlock and the quick start (examples/analyst.py) need: installed while
# the build runs (dpkg and the byte-compiling of python3-matplotlib's many dependencies
# use one core; the compiler the other).
packages=(
  python3 libpython3-stdlib libpython3.11 python3-numpy python3-pandas python3-matplotlib
  util-linux curl
)

# What only the tests and benchmarks need, and the features the quick start does not use;
# installed by `setup.sh --all` (scripts/test.sh).
test_packages=(
  libgtest-dev libgmock-dev googletest
  # baselines of the benchmarks (bench/startup.sh: bwrap), the egress tests (ip netns, openssl, ps)
  bubblewrap iproute2 openssl procps
  slowhttptest
  # airlock image build: Debian roots from recipes, packed as erofs images (docs/images.md)
  mmdebstrap erofs-utils
  # the pdf check's reader (pdfinfo, pdftotext), run in a sandbox on the host image
  poppler-utils qpdf  # qpdf: the scan for active content decodes every object with it (docs/checks.md)
  postgresql  # the store's tests and bench on PostgreSQL: initdb and a server in a temp dir (docs/store.md)
)

updated=0
# install_missing LABEL PACKAGE...: installs those not installed yet (apt-get update once).
install_missing() {
  local label="$1"; shift
  local missing=() p status
  for p in "$@"; do
    status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
    [[ "$status" == "install ok installed" ]] || missing+=("$p")
  done
  if (( ${#missing[@]} == 0 )); then
    echo "airlock setup: ${label}: all $# packages present"
    return 0
  fi
  if [[ "$(id -u)" -ne 0 ]]; then
    echo "airlock setup: missing packages (${missing[*]}); run as root" >&2
    return 1
  fi
  echo "airlock setup: ${label}: installing ${#missing[@]} packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if (( ! updated )); then apt-get update -qq || return 1; updated=1; fi
  local start=$SECONDS
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || return 1
  echo "airlock setup: ${label}: installed in $((SECONDS - start)) s"
}

# The same compile flags in both modes, so that scripts/test.sh after the quick start
# recompiles nothing of the airlock binary. -g1 (line tables, no variable locations)
# instead of RelWithDebInfo's -g: a quarter less compile time (docs/performance.md,
# "First start"); backtraces still have functions, files and lines.
config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
if (( all )); then
  config+=(-DAIRLOCK_TESTS=ON)
  targets=(all)
else
  config+=(-DAIRLOCK_TESTS=OFF)
  targets=(airlock)
fi

install_missing "build packages" "${build_packages[@]}"
if (( all )); then install_missing "test packages" "${test_packages[@]}"; fi

# A new build directory is made for Ninja, which compiles the next target's files while a
# library's last batches still compile (Make builds one target after the other): the quick
# start's build took 219 s against 233 s with Make, same machine. A build directory made
# before keeps the generator it was made with.
if [[ ! -f "${build}/CMakeCache.txt" ]]; then config+=(-G Ninja); fi

echo "airlock setup: building ${targets[*]} in ${build}"
mkdir -p "$build"
log="${build}/setup.log"
build_start=$SECONDS
{ cmake -S "$repo" -B "$build" "${config[@]}" &&
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"; } >"$log" 2>&1 &
build_pid=$!

run_status=0
install_missing "run packages" "${packages[@]}" || run_status=$?
build_status=0
wait "$build_pid" || build_status=$?
if (( build_status != 0 )); then
  { grep -E -B1 -A3 'error|undefined reference' "$log" | head -n 80; echo "..."; tail -n 15 "$log"; } >&2
  echo "airlock setup: build failed (full log: ${log})" >&2
  exit 1
fi
echo "airlock setup: built in $((SECONDS - build_start)) s"
if (( run_status != 0 )); then
  echo "airlock setup: installing the run packages failed" >&2
  exit 1
fi
echo "airlock setup: done (${build}/airlock)"
