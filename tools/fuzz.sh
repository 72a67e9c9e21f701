#!/usr/bin/env bash
# Builds the fuzz preset and runs every libFuzzer target (tests/fuzz/README.md).
#
#   tools/fuzz.sh [TARGET...]        all targets when none is named
#   FUZZ_SECONDS=300                 time per target (make fuzz: 300, make test: 5)
#   FUZZ_JOBS=2                      build parallelism
#
# Seeds: the captured vectors (tools/fuzz-seeds.py, regenerated each run) plus the hand-written
# tests/fuzz/seeds/<target>/. New inputs the fuzzer finds go to build/fuzz/corpus/<target>/ and
# are reused by later runs; crashes go to build/fuzz/artifacts/. Exits 1 if any target failed.
# Without clang++-14 it prints why and exits 0, so `make test` still passes on a machine
# without it (tools/install-deps.sh installs it).
set -uo pipefail

cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-300}
jobs=${FUZZ_JOBS:-$(nproc)}
build=build/fuzz

if ! command -v clang++-14 >/dev/null 2>&1; then
  echo "fuzz: skipped: clang++-14 is not installed (tools/install-deps.sh installs clang-14)"
  exit 0
fi

cmake --preset fuzz >/dev/null || exit 1
cmake --build --preset fuzz -j "$jobs" >"$build/build.log" 2>&1 || {
  tail -n 50 "$build/build.log"
  echo "fuzz: build failed (full log: $build/build.log)"
  exit 1
}

rm -rf "$build/seeds"
if command -v python3 >/dev/null 2>&1; then
  python3 tools/fuzz-seeds.py tests/data/vectors "$build/seeds" | tail -n 1
else
  echo "fuzz: python3 not found; using only the hand-written seeds"
fi

if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets <"$build/fuzz_targets.txt"
fi

mkdir -p "$build/artifacts" "$build/logs"
failed=()
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/$t"
  if [ ! -x "$bin" ]; then
    echo "fuzz: no target $t"
    failed+=("$t")
    continue
  fi
  corpus="$build/corpus/$t"
  mkdir -p "$corpus"
  dirs=("$corpus")
  for d in "$build/seeds/$t" "tests/fuzz/seeds/$t"; do
    [ -d "$d" ] && dirs+=("$d")
  done
  log="$build/logs/$t.log"
  # -timeout: one input taking seconds is a bug (every decoder is linear); -rss_limit_mb bounds
  # what a hostile length prefix could make us allocate.
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t-" "${dirs[@]}" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    echo "fuzz: $t ok (${runs:-?} runs in ${seconds}s, ${cov:-cov: ?})"
  else
    tail -n 40 "$log"
    echo "fuzz: $t FAILED (log: $log; reproduce: $bin $build/artifacts/$t-*)"
    failed+=("$t")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} target(s) ok"
