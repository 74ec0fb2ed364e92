// The tuning of one Function's shape classes: a search (jit/tuning/kernel_tuning_job.h) per
// kernel that has no complete tuning record, each with its share of the time budget; when a
// search finds a faster config the class's plan is rebuilt with it and swapped in while calls
// go on; each search's result becomes a tuning record. The searches are cancelled and awaited
// before the Function goes.
#ifndef PTO_JIT_TUNING_FUNCTION_TUNING_H_
#define PTO_JIT_TUNING_FUNCTION_TUNING_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "jit/dispatch_table.h"
#include "jit/ir/tile_ir.h"
#include "jit/runtime_impl.h"
#include "jit/tuning/apply_tuning_records.h"
#include "pto/options.h"

namespace pto::detail {

class FunctionTuning {
 public:
  // `mu`: the Function's lock, which guards each CompiledClass's program and current plan.
  FunctionTuning(RuntimeImpl& runtime, std::string function, std::mutex& mu);
  // Cancels the searches and waits for them: they call back into the Function.
  ~FunctionTuning();

  // Queues a search for each kernel of `cls` without a complete record (`mu` held); `queued`
  // (may be null) receives the jobs.
  void Queue(CompiledClass& cls, std::span<const int64_t> values, const jit::AppliedTuning& applied,
             std::vector<uint64_t>* queued);
  // Blocking tuning: waits for these jobs (returns at once in the other modes).
  void Wait(const std::vector<uint64_t>& jobs);
  // Plans rebuilt with a tuned kernel and swapped in.
  int64_t plans_swapped() const { return plans_swapped_.load(); }

 private:
  // Kernel `call` of `cls` is faster with `config`: rebuild the plan and swap it in.
  void Publish(CompiledClass& cls, int call, const ir::TileConfig& config);
  void WriteRecord(const CompiledClass& cls, int call, const KernelTuning& result,
                   const ir::TileConfig& best, bool complete);

  RuntimeImpl& runtime_;
  std::string function_;
  std::mutex& mu_;
  std::vector<uint64_t> jobs_;  // every job queued (under mu_)
  std::atomic<int64_t> plans_swapped_{0};
};

}  // namespace pto::detail

#endif  // PTO_JIT_TUNING_FUNCTION_TUNING_H_
