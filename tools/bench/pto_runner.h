// pto as a bench backend, through the public API only: Runtime::JitTraced, and calls of the
// Function on TensorViews over the bench's operand copies.
#ifndef PTO_TOOLS_BENCH_PTO_RUNNER_H_
#define PTO_TOOLS_BENCH_PTO_RUNNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pto/pto.h"
#include "tools/bench/bench_case.h"

namespace pto::bench {

// Compiles `spec`'s program for its shapes (the first call, on set 0, outside any timing) and
// returns a runner. intermediate_bytes is read from the plan (Function::Dump at the exec
// stage: the arena slots and their members' sizes).
absl::StatusOr<Prepared> PreparePto(Runtime& runtime, const CaseSpec& spec,
                                    const std::vector<IoSet>& sets);

// Sum over the arena slots of the largest member, in bytes, from the exec-stage dump's
// "buffers:" section; -1 when a size is not a number (a symbolic dim).
int64_t ArenaBytesFromExecDump(const std::string& dump);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_PTO_RUNNER_H_
