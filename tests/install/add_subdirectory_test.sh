#!/usr/bin/env bash
# Configures a parent project that adds pto with add_subdirectory (add_subdirectory/) and
# checks what it gets: no GTest needed (find_package(GTest) is disabled), libpto and none of
# pto's tests, tools or benchmarks, and pto::pto's include directory on the parent's program.
# Configure only: building libpto from scratch takes minutes.
#   add_subdirectory_test.sh CMAKE SOURCE_DIR
set -euo pipefail
cmake=$1 source_dir=$2
here=$source_dir/tests/install
work=$(mktemp -d "${TMPDIR:-/tmp}/pto-add-subdirectory-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$work/example"
touch "$work/example/readme_example.inc"
echo "+ $cmake -S $here/add_subdirectory -B $work/build -DPTO_SOURCE_DIR=$source_dir" \
     "-DPTO_EXAMPLE_DIR=$work/example -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON"
"$cmake" -S "$here/add_subdirectory" -B "$work/build" -DPTO_SOURCE_DIR="$source_dir" \
  -DPTO_EXAMPLE_DIR="$work/example" -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; fail "configuring a parent project of pto"; }

grep -E "^PTO_BUILD_|^PTO_INSTALL" "$work/build/CMakeCache.txt"
for option in PTO_BUILD_TESTS PTO_BUILD_TOOLS PTO_BUILD_BENCH PTO_INSTALL; do
  grep -qx "$option:BOOL=OFF" "$work/build/CMakeCache.txt" || fail "$option is not OFF"
done

"$cmake" --build "$work/build" --target help > "$work/targets.txt"
grep -qx '\.\.\. pto' "$work/targets.txt" || fail "no target pto"
grep -qx '\.\.\. using_it' "$work/targets.txt" || fail "no target using_it"
for absent in pto_cli pto_bench_kernels pto_jit_test install_downstream; do
  if grep -qx "\.\.\. $absent" "$work/targets.txt"; then fail "target $absent exists"; fi
done

# The parent's program sees pto's public headers through pto::pto (and nothing of pto's tree
# beyond include/); pto's own sources see its generated protobuf headers in pto's build dir.
using_it=$(grep -F '"command"' "$work/build/compile_commands.json" | grep -F using_it.cc)
[[ "$using_it" == *"$source_dir/include "* ]] || fail "using_it lacks -I$source_dir/include"
[[ "$using_it" != *"-I$source_dir "* ]] || fail "using_it sees the whole pto tree"
grep -F '"command"' "$work/build/compile_commands.json" | grep -F jit/runtime.cc |
  grep -qF -- "-I$work/build/pto " || fail "pto's sources lack pto's build dir"
echo "add_subdirectory_test: ok"
