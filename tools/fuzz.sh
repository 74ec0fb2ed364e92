#!/usr/bin/env bash
# Builds the `fuzz` preset (clang-19: libFuzzer, ASan + UBSan) and runs each fuzz target of
# tests/fuzz/ for SECONDS (wall clock) with one fuzzing process per core, from its checked-in
# corpus plus what earlier runs found (build/fuzz/corpus/<target>/, shared by the processes).
# A process that stops on a finding is restarted until the time is up. Prints a line per target
# and every finding.
#   tools/fuzz.sh [SECONDS] [TARGET...]   default: 60 s, every target
# Findings (crash-*, leak-*, timeout-*, oom-*: the input) are left in
# build/fuzz/findings/<target>/, each with its stack in <input>.txt; inputs slower than 10 s
# (slow-unit-*) are listed but are not failures. To make a finding a regression input:
# build/fuzz/tests/fuzz/fuzz_<target> -minimize_crash=1 -runs=20000 INPUT, then copy the
# smallest result to tests/fuzz/regressions/<target>/ (docs/testing.md). Exit status 1 if any
# target had a finding.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(npy workload cache_record bundle graph_def); fi
workers="$(nproc)"

tools/setup.sh fuzz

build="$PWD/build/fuzz"
export ASAN_OPTIONS="detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1"

# fuzz_worker TARGET INDEX DEADLINE: runs the target until DEADLINE (in $SECONDS), restarting it
# after each finding. Its targets' temporary directories go to a scratch directory of its own
# (a crashed run cannot remove them).
fuzz_worker() {
  local target="$1" index="$2" deadline="$3"
  local findings="$build/findings/$target"
  local scratch="$build/tmp/$target-$index"
  local flags=(-timeout=60 -artifact_prefix="$findings/" -print_final_stats=1)
  if [ -f "tests/fuzz/dict/$target.dict" ]; then flags+=(-dict="tests/fuzz/dict/$target.dict"); fi
  while [ "$SECONDS" -lt "$deadline" ]; do
    mkdir -p "$scratch"
    TMPDIR="$scratch" "$build/tests/fuzz/fuzz_$target" "${flags[@]}" \
      -max_total_time="$((deadline - SECONDS))" "$build/corpus/$target" \
      "tests/fuzz/corpus/$target" >> "$findings/worker-$index.log" 2>&1 || sleep 1
    rm -rf "$scratch"
  done
}

found=0
for target in "${targets[@]}"; do
  findings="$build/findings/$target"
  mkdir -p "$build/corpus/$target" "$findings"
  before="$(ls "$findings")"
  rm -f "$findings"/worker-*.log
  deadline=$((SECONDS + seconds))
  for ((i = 0; i < workers; i++)); do fuzz_worker "$target" "$i" "$deadline" & done
  wait
  runs="$(cat "$findings"/worker-*.log | sed -n 's/^Done \([0-9]*\) runs.*/\1/p' |
          awk '{ n += $1 } END { print n + 0 }')"
  coverage="$(cat "$findings"/worker-*.log | grep -oE 'cov: [0-9]+ ft: [0-9]+' | sort -t' ' -k2n |
              tail -1)"
  echo "fuzz $target: $seconds s x $workers processes, $runs runs, ${coverage:-no coverage line}," \
       "$(ls "$build/corpus/$target" | wc -l) inputs kept in build/fuzz/corpus/$target"
  new="$(comm -13 <(echo "$before") <(ls "$findings") | grep -vE '\.(txt|log)$' || true)"
  shown=0
  for input in $new; do
    if [[ "$input" == slow-unit-* ]]; then
      echo "  slow (over 10 s): $findings/$input"
      continue
    fi
    found=1
    shown=$((shown + 1))
    if [ "$shown" -gt 10 ]; then continue; fi  # the first ten get their stack
    # Runs the input alone for its stack.
    mkdir -p "$build/tmp/rerun"
    TMPDIR="$build/tmp/rerun" timeout 300 "$build/tests/fuzz/fuzz_$target" "$findings/$input" \
      > "$findings/$input.txt" 2>&1 || true
    rm -rf "$build/tmp/rerun"
    echo "  FOUND $findings/$input"
    grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|fuzz check failed' \
      "$findings/$input.txt" | sed 's/^/    /' || true
  done
  if [ "$shown" -gt 10 ]; then echo "  and $((shown - 10)) more in $findings"; fi
done
exit "$found"
