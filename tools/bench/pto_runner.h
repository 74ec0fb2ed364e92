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

// How pto's kernels are tuned before they are timed (--tune-trials, --tune-seconds).
struct PtoTuning {
  int64_t trials_per_kernel = 0;  // 0: not tuned (default configs)
  double seconds_per_kernel = 30;
};

// The Runtime's options for a thread count: memory-only cache; with tuning, blocking tuning,
// so that a case's first call (PreparePto) tunes its kernels before it returns. PTO_PIN_THREADS,
// when set, chooses the thread pinning.
RuntimeOptions PtoRuntimeOptions(int threads, const PtoTuning& tuning);

// Compiles `spec`'s program for its shapes (the first call, on set 0, outside any timing; with
// blocking tuning it also tunes, and tuning has ended when this returns) and returns a runner.
// intermediate_bytes is read from the plan (Function::Dump at the exec stage: the arena slots and
// their members' sizes).
absl::StatusOr<Prepared> PreparePto(Runtime& runtime, const CaseSpec& spec,
                                    const std::vector<IoSet>& sets);

// One line per kernel tuned for `function` (a case's name) in `results`: its name, default
// and tuned time as the tuner measured them, speed-up, trials, tuning time and how it ended.
std::string TuningSummary(const std::vector<KernelTuning>& results, const std::string& function);

// Sum over the arena slots of the largest member, in bytes, from the exec-stage dump's
// "buffers:" section; -1 when a size is not a number (a symbolic dim).
int64_t ArenaBytesFromExecDump(const std::string& dump);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_PTO_RUNNER_H_
