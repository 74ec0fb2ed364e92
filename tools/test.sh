#!/usr/bin/env bash
# Quickstart 2: set up, build and run the tests with ctest.
#   tools/test.sh [preset [label]]   preset: release (default), debug, asan, tsan, fuzz (clang,
#                                    ASan + UBSan: the suite and the fuzz targets); with a label
#                                    (e.g. concurrency, tests/CMakeLists.txt), only the test
#                                    binaries carrying it are built and run
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
label="${2:-}"
target="${label:+pto_tests_$label}"
# The fuzz preset's own build target is the fuzzers alone; the suite needs everything.
if [ "$preset" = fuzz ] && [ -z "$target" ]; then target=all; fi
tools/setup.sh "$preset" $target
ctest --preset "$preset" -j "$(nproc)" ${label:+-L "^$label\$"}
