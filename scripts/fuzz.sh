#!/usr/bin/env bash
# Build the libFuzzer targets in fuzz/ with clang (ASan + UBSan) into
# build-fuzz/ and run each for SECONDS (default 30), one at a time, from its
# seed corpus in fuzz/corpus/<target>/. Prints one summary line per target and
# exits non-zero when a target crashed, hung or leaked; the input that did it
# is kept in build-fuzz/artifacts/<target>/. See docs/fuzzing.md.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# New inputs libFuzzer finds go to build-fuzz/corpus/<target>/, never into the
# repository: add a reproducer to fuzz/corpus/ by hand with its fix.
# Not part of the quick start or CI's default build (scripts/setup.sh): this
# installs its own compiler. Run as root for the install step.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${repo}/build-fuzz"
seconds="${1:-30}"
shift || true
jobs="${AIRLOCK_FUZZ_BUILD_JOBS:-2}"

# clang 16 (Debian 12): clang 14 cannot compile libstdc++ 12's <expected>.
packages=(clang-16 libclang-rt-16-dev)
missing=()
for p in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
if (( ${#missing[@]} > 0 )); then
  echo "airlock fuzz: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

targets=("$@")
if (( ${#targets[@]} == 0 )); then
  for f in "${repo}"/fuzz/corpus/*/; do targets+=("$(basename "$f")"); done
fi

mkdir -p "$build"
log="${build}/build.log"
echo "airlock fuzz: building ${#targets[@]} targets in ${build}"
if ! { cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-16 \
         -DAIRLOCK_FUZZ=ON -DAIRLOCK_BENCH=OFF -DAIRLOCK_STATIC_DEPS=OFF &&
       cmake --build "$build" -j"$jobs" --target "${targets[@]/#/fuzz_}"; } >"$log" 2>&1; then
  { grep -E -B1 -A3 'error|undefined reference' "$log" | head -n 60; tail -n 10 "$log"; } >&2
  echo "airlock fuzz: build failed (full log: ${log})" >&2
  exit 1
fi

# Symbolized stacks in the logs (llvm-symbolizer from the default llvm package).
if [[ -z "${ASAN_SYMBOLIZER_PATH:-}" && -x /usr/bin/llvm-symbolizer ]]; then
  export ASAN_SYMBOLIZER_PATH=/usr/bin/llvm-symbolizer
fi

failed=0
for t in "${targets[@]}"; do
  corpus="${build}/corpus/${t}"
  artifacts="${build}/artifacts/${t}"
  mkdir -p "$corpus" "$artifacts"
  out="${build}/${t}.log"
  touch "${build}/${t}.start"
  status=0
  # One process (the machine is shared); -timeout: one input over 10 s is a hang;
  # -rss_limit_mb: over 2 GiB is a failure; leaks are reported by ASan at exit.
  "${build}/fuzz/fuzz_${t}" "$corpus" "${repo}/fuzz/corpus/${t}" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
    -artifact_prefix="${artifacts}/" >"$out" 2>&1 || status=$?
  runs="$(grep -oE '^stat::number_of_executed_units: [0-9]+' "$out" | awk '{print $2}' | tail -n1)"
  [[ -n "$runs" ]] || runs="$(grep -oE '^#[0-9]+' "$out" | tail -n1 | tr -d '#')"
  cov="$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$out" | tail -n1)"
  found=$(find "$artifacts" -type f -newer "${build}/${t}.start" | wc -l)
  if (( status != 0 )); then
    failed=1
    reason="$(grep -m1 -oE 'ERROR: [A-Za-z]+: [^ ]+( [^ ]+)?|ALARM: .*|SUMMARY: .*|-rss_limit_mb' "$out" || echo "exit $status")"
    echo "fuzz ${t}: FAILED after ${runs:-?} runs (${cov:-no coverage line}): ${reason}; artifacts: ${found} in ${artifacts}; log: ${out}"
  else
    echo "fuzz ${t}: ${runs:-?} runs in ${seconds} s, ${cov:-no coverage line}, crashes 0"
  fi
done
exit "$failed"
