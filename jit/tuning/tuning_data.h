// The data a tuning candidate runs on: a shape class's program at chosen symbol values, with
// random inputs, and for the correctness check the ops/ reference outputs and a tolerance
// that scales with the longest reduction.
#ifndef PTO_JIT_TUNING_TUNING_DATA_H_
#define PTO_JIT_TUNING_TUNING_DATA_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/aligned_buffer.h"
#include "device/thread_arena.h"
#include "jit/ir/graph.h"
#include "jit/pipeline.h"
#include "jit/plan.h"
#include "jit/shape_class.h"
#include "ops/host_tensor.h"

namespace pto::jit {

// Inputs and outputs of one run of a traced graph at given symbol values.
struct ProgramData {
  std::vector<int64_t> symbols;  // values of the traced graph's symbols
  std::vector<ops::HostTensor> inputs;
  // Per input: the int32 values of an i32 input, which the plan reads (empty for f32 ones).
  std::vector<std::vector<int32_t>> raw_inputs;
  std::vector<ops::HostTensor> outputs;   // written by Run
  std::vector<ops::HostTensor> expected;  // the reference's outputs (checks only)
  double tolerance = 0;                   // relative to each output's largest magnitude
  // Per output, the error of a correct plan (MeasureBaseline); empty until measured.
  std::vector<double> baseline_errors;

  // The buffer the plan reads for input i.
  void* InputBuffer(size_t i) {
    return raw_inputs[i].empty() ? static_cast<void*>(inputs[i].data.data())
                                 : static_cast<void*>(raw_inputs[i].data());
  }
};

// The symbol values a candidate is checked at: every symbol at the smallest value of its class,
// at the largest, and at a value that is not a multiple of any tile (an odd value near the
// middle of the bucket); duplicates removed. A static class gives one set. Derived symbols get
// placeholder values: MakeProgramData computes them from the others.
std::vector<std::vector<int64_t>> CheckSymbolValues(const ShapeClass& cls);

// Random inputs (seeded) for `traced` at `symbols` and zeroed outputs (an i32 input's values
// index within the smallest axis or depth it indexes); with `reference`, the
// ops/ reference outputs and the tolerance for `program` (the graph as lowered for the class).
absl::StatusOr<ProgramData> MakeProgramData(const ir::Graph& traced, const LoweredProgram& program,
                                            std::span<const int64_t> symbols, uint64_t seed,
                                            bool reference);

// Per output, the largest error of `data.outputs` against `data.expected`, each element's
// relative to the output's largest finite reference magnitude: 0 when equal or both NaN, +inf
// when only one is NaN or an i32 element differs.
std::vector<double> OutputErrors(const ProgramData& data);

// The error output `output` of a candidate may have: the fixed tolerance, or 4x the baseline's
// error of that output when larger.
double CheckTolerance(const ProgramData& data, size_t output);

// OK when every output is within CheckTolerance of the reference (i32 outputs exactly), else
// FailedPrecondition("wrong answer: output O element I is G, the reference says W (tolerance
// T)") for the first element that is not (NaN where the reference is finite is wrong).
absl::Status CompareOutputs(const ProgramData& data);

// Runs a plan known to be correct (the one being tuned from) on `data` and keeps its errors as
// the baseline: how much each output amplifies the rounding of a different summation order.
// `intermediates` as for Plan::Run.
absl::Status MeasureBaseline(const Plan& plan, ProgramData& data, device::ThreadArena* threads,
                             device::AlignedBuffer* intermediates = nullptr);

// Runs `plan` on `data` and compares its outputs (CompareOutputs). Errors of the run itself are
// returned as is. `intermediates` as for Plan::Run.
absl::Status CheckPlan(const Plan& plan, ProgramData& data, device::ThreadArena* threads,
                       device::AlignedBuffer* intermediates = nullptr);

// The specialized program's symbol values (kernel extents are written in these) for the
// traced graph's `symbols`.
std::vector<int64_t> ProgramSymbolValues(const LoweredProgram& program,
                                         std::span<const int64_t> symbols);

// A kernel call's work at `kernel_symbols` (ProgramSymbolValues): grid cells x work per cell.
int64_t KernelWork(const ir::KernelCall& call, std::span<const int64_t> kernel_symbols);

// The longest reduction of `program`'s kernels at `symbols` (matmul K, row length of row ops,
// the reduced extent): the error of a float sum grows with it.
int64_t LongestReduction(const LoweredProgram& program, std::span<const int64_t> symbols);

}  // namespace pto::jit

#endif  // PTO_JIT_TUNING_TUNING_DATA_H_
