#!/usr/bin/env bash
# Quickstart 1: set up, build and run `pto demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh release
exec build/release/tools/pto demo "$@"
