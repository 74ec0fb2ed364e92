#!/usr/bin/env bash
# Builds the `fuzz` preset (clang-19: libFuzzer, ASan + UBSan) and runs each fuzz target of
# tests/fuzz/ for SECONDS (wall clock) on every core, from its checked-in corpus plus what
# earlier runs found (build/fuzz/corpus/<target>/). Prints a line per target and every crash.
#   tools/fuzz.sh [SECONDS] [TARGET...]   default: 60 s, every target
# Findings (crash-*, leak-*, timeout-*, oom-*: the input) are left in
# build/fuzz/findings/<target>/, each with its stack in <input>.txt. To make one a regression
# input: build/fuzz/tests/fuzz/fuzz_<target> -minimize_crash=1 -runs=20000 INPUT, then copy the
# smallest result to tests/fuzz/regressions/<target>/ (docs/testing.md). Exit status 1 if any
# target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(npy workload cache_record bundle graph_def); fi
workers="$(nproc)"

tools/setup.sh fuzz

build="$PWD/build/fuzz"
scratch="$build/tmp"
export ASAN_OPTIONS="detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1"
crashed=0
for target in "${targets[@]}"; do
  binary="$build/tests/fuzz/fuzz_$target"
  corpus="$build/corpus/$target"
  findings="$build/findings/$target"
  mkdir -p "$corpus" "$findings" "$scratch"
  flags=(-fork="$workers" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1
         -max_total_time="$seconds" -timeout=60
         -artifact_prefix="$findings/" -print_final_stats=1)
  dict="tests/fuzz/dict/$target.dict"
  [ -f "$dict" ] && flags+=(-dict="$dict")
  before="$(ls "$findings" | grep -v '\.txt$' | sort || true)"
  # The targets' temporary directories go to $scratch (a crashed run cannot remove its own).
  TMPDIR="$scratch" "$binary" "${flags[@]}" "$corpus" "tests/fuzz/corpus/$target" \
    > "$findings/fuzz.log" 2>&1 || true
  rm -rf "$scratch"
  new="$(comm -13 <(echo "$before") <(ls "$findings" | grep -v '\.txt$' | grep -v '^fuzz.log$' | sort))"
  # The last status line of fork mode: "#RUNS: cov: ... exec/s: ... oom/timeout/crash: ...".
  stats="$(grep -E '^#[0-9]+: cov' "$findings/fuzz.log" | tail -1 || true)"
  echo "fuzz $target: $seconds s x $workers workers, $(ls "$corpus" | wc -l) inputs kept in" \
       "$corpus; ${stats:-no status line (see $findings/fuzz.log)}"
  for input in $new; do
    crashed=1
    # Rerun the input alone for its stack.
    mkdir -p "$scratch"
    TMPDIR="$scratch" timeout 120 "$binary" "$findings/$input" > "$findings/$input.txt" 2>&1 || true
    rm -rf "$scratch"
    echo "  FOUND $findings/$input"
    grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|fuzz check failed' \
      "$findings/$input.txt" | sed 's/^/    /' || true
  done
done
exit "$crashed"
