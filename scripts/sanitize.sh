#!/usr/bin/env bash
# Build airlock with AddressSanitizer + UndefinedBehaviorSanitizer into
# build-asan/ and run the unit tests and the service's integration tests under
# them; any report stops the test that made it (halt_on_error). The output
# ends with ctest's summary; the exit status is ctest's. Needs root.
#
#   scripts/sanitize.sh            unit tests + service tests
#   scripts/sanitize.sh unit       unit tests only (what CI can afford: docs/faults.md)
#   AIRLOCK_SANITIZE_TESTS=REGEX   run the ctest tests matching REGEX instead
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${AIRLOCK_SANITIZE_BUILD:-${repo}/build-asan}"
jobs="$(nproc)"
(( jobs > 2 )) && jobs=2

# The service's integration suites (tests/integration): the HTTP server, jobs,
# sessions, the pool behind the service, load, restart and fault tests.
service_suites='Service[A-Za-z]*|SessionApi|SessionLimits|HttpServerTest|Fault[A-Za-z]*'
mode="${1:-service}"
case "$mode" in
  unit) targets=(unit_tests) ;;
  service) targets=(unit_tests airlock integration_tests) ;;
  *) echo "usage: scripts/sanitize.sh [unit|service]" >&2; exit 2 ;;
esac

# GCC 12 warns of uninitialized values inside libstdc++ (std::regex) at -O1
# with the sanitizers: not an error of ours.
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -Wno-error=maybe-uninitialized"
echo "airlock sanitize: building ${targets[*]} in ${build}"
mkdir -p "$build"
log="${build}/build.log"
start=$SECONDS
# Static libstdc++ does not mix with the sanitizers' runtimes: shared deps.
# -O1 -g1: the usual optimization for ASan, line tables for the reports.
if ! { cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
         -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
         -DAIRLOCK_STATIC_DEPS=OFF -DAIRLOCK_BENCH=OFF &&
       cmake --build "$build" -j"$jobs" --target "${targets[@]}"; } >"$log" 2>&1; then
  { grep -E -B1 -A3 'error|undefined reference' "$log" | head -n 80; echo "..."; tail -n 15 "$log"; } >&2
  echo "airlock sanitize: build failed (full log: ${log})" >&2
  exit 1
fi
echo "airlock sanitize: built in $((SECONDS - start)) s"

# halt_on_error: the first report ends the process, so the test fails.
# detect_leaks: LeakSanitizer stops the world with ptrace at exit; the
# sandbox's own processes (cloned from airlock, under seccomp, no ptrace)
# leave through _exit and never run it.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"


# ctest names tests Suite.Test: the unit tests are every suite unit_tests lists.
unit_suites="$("${build}/tests/unit_tests" --gtest_list_tests | sed -n 's/^\([^ ].*\)\.$/\1/p' | paste -sd'|')"
default_tests="^(${unit_suites})\\."
[[ "$mode" == service ]] && default_tests="^(${unit_suites}|${service_suites})\\."
tests="${AIRLOCK_SANITIZE_TESTS:-$default_tests}"

echo "airlock sanitize: running ctest -R '${tests}'"
start=$SECONDS
status=0
ctest --test-dir "$build" --output-on-failure -j1 -R "$tests" || status=$?
echo "airlock sanitize: tests ran in $((SECONDS - start)) s"
exit "$status"
