#!/usr/bin/env bash
# Whether two builds generate the same machine code: `pto dump --stage=asm` of the examples
# (the demo's block among them) and `pto_bench_kernels --dump-asm` of every bench case, from
# each build, compared with kernel symbols masked (a change may rename kernels). For changes
# that must not alter the generated code; unlike a benchmark, noise cannot hide a difference.
#   tools/compare_codegen.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR [OUT_DIR]
# e.g. tools/compare_codegen.sh /tmp/old/build/release build/release
# Prints the kernels compared per program and exits 1 at the first difference (diff shown).
set -euo pipefail
before="$1" after="$2" out="${3:-$(mktemp -d)}"
mkdir -p "$out"
# Kernel symbols start with their dtype (f32_...); labels and sections derived from them too.
mask() { sed -E 's/\bf32_[A-Za-z0-9_.]+/KERNEL/g'; }
dump() {  # dump BUILD NAME: writes OUT/NAME.BUILD-TAG.s for the two builds
  local build="$1" tag="$2"
  for example in matmul mlp attention demo; do
    "$build/tools/pto" dump --stage=asm --example "$example" | mask > "$out/$example.$tag.s"
  done
  "$build/tools/bench/pto_bench_kernels" --dump-asm --threads 2 | mask > "$out/bench.$tag.s"
}
dump "$before" before
dump "$after" after
status=0
for program in matmul mlp attention demo bench; do
  kernels="$(grep -c '^KERNEL:' "$out/$program.after.s" || true)"
  if diff -u "$out/$program.before.s" "$out/$program.after.s" > "$out/$program.diff"; then
    echo "$program: identical ($kernels kernels, $(wc -l < "$out/$program.after.s") lines)"
  else
    echo "$program: DIFFERENT ($out/$program.diff)"
    head -40 "$out/$program.diff"
    status=1
  fi
done
exit "$status"
