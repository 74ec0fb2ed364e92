#!/usr/bin/env bash
# Installs the Debian 12 packages pto needs (when missing), configures and builds.
#   tools/setup.sh [preset [target]]   preset: release (default), debug, asan, tsan, fuzz;
#                                      target: only this CMake target (default: the preset's)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
target="${2:-}"
packages=(cmake g++ make pkg-config binutils llvm-19-dev libtbb-dev libabsl-dev libprotobuf-dev
          protobuf-compiler librocksdb-dev libgtest-dev libgmock-dev zlib1g-dev libzstd-dev
          libsodium-dev libcli11-dev
          python3  # the trace tests read pto's Chrome trace files back with python3's json
          python3-torch  # the gradient comparison test (tests/training): PyTorch and NumPy
          clang-19 libclang-rt-19-dev  # the fuzz preset: clang, libFuzzer and its sanitizers
          libdnnl-dev libopenblas-dev libxsmm-dev)  # the last three: baselines of pto_bench_kernels
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)" ${target:+--target "$target"}
