#!/usr/bin/env bash
# Installs ONNX Runtime for pto_bench_kernels' ONNX Runtime column (not needed by the tests):
# npm's onnxruntime-node 1.30.0, whose package carries libonnxruntime.so.1 for linux x64, into
# build/onnxruntime (where CMake's PTO_ONNXRUNTIME_NODE_DIR looks by default), and Debian's
# nodejs and npm when there is no node. Its install script is skipped: it downloads from a host
# this machine cannot reach, and the package already holds the CPU build.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends nodejs npm
fi
mkdir -p build/onnxruntime
npm install --prefix build/onnxruntime --ignore-scripts --no-audit --no-fund \
  onnxruntime-node@1.30.0
echo "onnxruntime-node installed in build/onnxruntime/node_modules/onnxruntime-node"
