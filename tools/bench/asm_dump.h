// `pto_bench_kernels --dump-asm`: pto's assembly for each case, no timing. Two builds' dumps,
// with kernel symbols masked, show whether a change altered the generated code
// (tools/compare_codegen.sh).
#ifndef PTO_TOOLS_BENCH_ASM_DUMP_H_
#define PTO_TOOLS_BENCH_ASM_DUMP_H_

#include <vector>

#include "tools/bench/bench_case.h"

namespace pto::bench {

// Prints "== CASE" and the assembly of every kernel of each case's shape class to stdout.
// Returns the process's exit status (1 if a case failed to compile).
int DumpAssembly(const std::vector<CaseSpec>& cases, int threads);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_ASM_DUMP_H_
