#!/usr/bin/env bash
# Installs a pto build into a temporary prefix and builds and runs two programs against the
# installed files only, as an embedder does: one with find_package(pto) (find_package/), one
# with a compiler command line from `pkg-config --cflags --libs pto`. Both compile
# using_it.cc, which includes the README's "Using it" code block as written (extracted from
# README.md between its markers), and check its results. Also checks what was installed:
# libpto's SONAME, an interface without pto's private dependencies, and the pto program.
#   downstream_test.sh CMAKE BUILD_DIR SOURCE_DIR BUILT_LIBPTO BUILT_PTO
# CXX, CXXFLAGS and LDFLAGS (the build's compiler and sanitizer flags) reach both programs.
set -euo pipefail
cmake=$1 build_dir=$2 source_dir=$3 built_libpto=$4 built_pto=$5
here=$source_dir/tests/install
work=$(mktemp -d "${TMPDIR:-/tmp}/pto-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

fail() { echo "FAIL: $*" >&2; exit 1; }
run() { echo "+ $*"; "$@"; }

# --- install ---
echo "+ $cmake --install $build_dir --prefix $prefix"
"$cmake" --install "$build_dir" --prefix "$prefix" > "$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install"; }
pc_file=$(find "$prefix" -name pto.pc)
[ -n "$pc_file" ] || fail "no pto.pc installed"
libdir=$(dirname "$(dirname "$pc_file")")
for f in "$libdir/libpto.so" "$libdir/cmake/pto/ptoConfig.cmake" \
         "$libdir/cmake/pto/ptoConfigVersion.cmake" "$prefix/include/pto/pto.h" \
         "$prefix/bin/pto"; do
  [ -e "$f" ] || fail "not installed: $f"
done

# libpto's SONAME names an installed file.
soname=$(readelf -d "$libdir/libpto.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
echo "libpto SONAME: $soname"
[[ "$soname" == libpto.so.* ]] && [ -e "$libdir/$soname" ] || fail "SONAME '$soname'"

# The binaries, built and installed, look for nothing in the current directory (an empty
# RUNPATH entry); installed, nothing in the build tree.
runpath_of() { readelf -d "$1" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p'; }
for f in "$built_libpto" "$built_pto" "$libdir/libpto.so" "$prefix/bin/pto"; do
  runpath=$(runpath_of "$f")
  echo "$f RUNPATH: ${runpath:-(none)}"
  [ -z "$runpath" ] || [[ ":$runpath:" != *::* ]] || fail "an empty entry in $f's RUNPATH"
done
for f in "$libdir/libpto.so" "$prefix/bin/pto"; do
  [[ "$(runpath_of "$f")" != *"$build_dir"* ]] || fail "$f's RUNPATH names the build tree"
done

# Nothing libpto links privately is part of its interface, and nothing points into the build.
private='LLVM|rocksdb|RocksDB|tbb|TBB|protobuf|sodium|pto_jit'
if grep -En "$private" "$libdir"/cmake/pto/*.cmake "$pc_file"; then
  fail "a private dependency is in the installed package"
fi
if grep -Fn "$build_dir" "$libdir"/cmake/pto/*.cmake "$pc_file"; then
  fail "the installed package names the build tree"
fi

# The installed program runs from the prefix.
"$prefix/bin/pto" dump --stage=tensor --example matmul > "$work/pto_dump.txt" ||
  fail "the installed pto program"
grep -q "matmul(" "$work/pto_dump.txt" || fail "pto dump printed: $(cat "$work/pto_dump.txt")"

# --- the README's example ---
mkdir -p "$work/example"
awk '/<!-- using-it example: end/ { inside = 0 }
     inside && !/^```/ { print }
     /<!-- using-it example: begin/ { inside = 1 }' \
  "$source_dir/README.md" > "$work/example/readme_example.inc"
grep -q "pto::Runtime::Open" "$work/example/readme_example.inc" ||
  fail "no example between the README's using-it markers"

# check_program PROGRAM: runs it, expects its "ok" line, and that it loaded the installed libpto.
check_program() {
  local status=0 loaded
  echo "+ $1"
  "$1" > "$work/out.txt" 2>&1 || status=$?
  cat "$work/out.txt"
  [ "$status" = 0 ] || fail "$1 exited with $status"
  grep -qx "using_it: ok" "$work/out.txt" || fail "$1 did not print its ok line"
  loaded=$(ldd "$1" | awk '/libpto\.so/ { print $3 }')
  [[ "$loaded" == "$libdir/"* ]] || fail "$1 loads libpto from '$loaded', not from $libdir"
}

# --- pkg-config ---
export PKG_CONFIG_PATH=$libdir/pkgconfig
version=$(pkg-config --modversion pto)
echo "+ pkg-config --cflags --libs pto"
pto_flags=$(pkg-config --cflags --libs pto)
echo "$pto_flags"
[ -n "$pto_flags" ] || fail "pkg-config --cflags --libs pto printed nothing"
# shellcheck disable=SC2086  # CXXFLAGS, LDFLAGS and pkg-config's output are lists of flags
run "${CXX:-c++}" -std=c++20 ${CXXFLAGS:-} -I"$work/example" "$here/using_it.cc" \
  -o "$work/pkg_config_using_it" ${LDFLAGS:-} $pto_flags -Wl,-rpath,"$libdir"
check_program "$work/pkg_config_using_it"

# --- find_package(pto) ---
configure() {
  echo "+ $cmake -S $here/find_package -B $work/find_package -DCMAKE_PREFIX_PATH=$prefix" \
       "-DPTO_EXAMPLE_DIR=$work/example $*"
  "$cmake" -S "$here/find_package" -B "$work/find_package" -DCMAKE_PREFIX_PATH="$prefix" \
    -DPTO_EXAMPLE_DIR="$work/example" "$@" > "$work/configure.log" 2>&1
}
configure -DPTO_VERSION_WANTED="$version" ||
  { cat "$work/configure.log"; fail "configuring the find_package project"; }
cat "$work/configure.log"
grep -q "^-- pto $version from $libdir/cmake/pto\$" "$work/configure.log" ||
  fail "find_package(pto $version) did not find the installed package"
run "$cmake" --build "$work/find_package" --verbose ||
  fail "building the find_package project"
check_program "$work/find_package/using_it"

# Another minor release before 1.0, another major release after, is refused.
IFS=. read -r major minor _ <<< "$version"
if [ "$major" = 0 ]; then other="0.$((minor + 1))"; else other="$((major + 1)).0"; fi
echo "(expected to fail:)"
if configure -DPTO_VERSION_WANTED="$other"; then
  fail "find_package(pto $other) accepted version $version"
fi
grep -q "ptoConfig.cmake, version: $version" "$work/configure.log" ||
  { cat "$work/configure.log"; fail "find_package(pto $other) failed for another reason"; }
echo "find_package(pto $other) refused version $version, as expected"
echo "downstream_test: ok"
