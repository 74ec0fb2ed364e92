#!/usr/bin/env bash
# Quickstart 2: set up, build and run the tests with ctest.
#   tools/test.sh [preset [label]]   preset: release (default), debug, asan, tsan; with a label
#                                    (e.g. concurrency, tests/CMakeLists.txt), only the test
#                                    binaries carrying it are built and run
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
label="${2:-}"
tools/setup.sh "$preset" ${label:+"pto_tests_$label"}
ctest --preset "$preset" -j "$(nproc)" ${label:+-L "^$label\$"}
