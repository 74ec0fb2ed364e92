// check_numerics (FunctionOptions::check_numerics) as a RunObserver of one call's Plan::Run:
// before the first kernel it scans the call's inputs, after each kernel the buffers it
// finished writing (written_buffers.h), and fails the run at the first NaN or infinity with
// InvalidArgument naming the input, or the kernel, its buffer, node, element and value and
// the op that first produced one (locate_op.h). An input a kernel overwrote in place is
// recomputed for the re-run from its own operands, so that a clean call copies nothing.
#ifndef PTO_JIT_NUMERICS_NUMERICS_CHECKER_H_
#define PTO_JIT_NUMERICS_NUMERICS_CHECKER_H_

#include <span>
#include <vector>

#include "absl/status/status.h"
#include "jit/ir/graph.h"
#include "jit/numerics/checked_constants.h"
#include "jit/numerics/written_buffers.h"
#include "jit/plan.h"

namespace pto::jit::numerics {

class NumericsChecker : public RunObserver {
 public:
  // `graph`: the graph the plan's node ids refer to (the shape class's lowered graph);
  // `inputs`: the call's inputs as Plan::Run gets them, one per Function input.
  // `constants`, when not null: the Function's constant inputs found finite so far (those
  // `is_constant` marks are scanned once per copy). All must outlive the run.
  NumericsChecker(const Plan& plan, const ir::Graph& graph, std::span<void* const> inputs,
                  const std::vector<bool>& is_constant, CheckedConstants* constants);

  absl::Status BeforeKernel(const KernelLaunch& launch) override;
  absl::Status AfterKernel(const KernelLaunch& launch) override;

 private:
  absl::Status CheckInputs(std::span<const int64_t> symbols);
  // The values of `node` in the memory the kernel of `launch` read and did not overwrite, or
  // a Function input; null if neither holds it.
  const float* Memory(const KernelLaunch& launch, int node) const;

  const Plan& plan_;
  const ir::Graph& graph_;
  std::span<void* const> inputs_;
  const std::vector<bool>& is_constant_;
  CheckedConstants* constants_;
  std::vector<std::vector<WrittenBuffer>> scan_;  // per kernel
};

}  // namespace pto::jit::numerics

#endif  // PTO_JIT_NUMERICS_NUMERICS_CHECKER_H_
