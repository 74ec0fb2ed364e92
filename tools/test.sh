#!/usr/bin/env bash
# Quickstart 2: set up, build and run the tests with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
tools/setup.sh "$preset"
ctest --preset "$preset" -j "$(nproc)"
