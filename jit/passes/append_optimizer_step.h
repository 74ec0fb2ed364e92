// Pass: appends a training step's optimizer update to a differentiated graph. The parameters
// are one flat input (each parameter a window of it) and so is each optimizer state tensor,
// so the update is elementwise over the flat vectors: a few kernels for the whole parameter
// list, however many parameters it has. The gradients are laid end to end by a concat whose
// inputs are computed straight into their windows (build_tile_graph), clipped by their global
// norm if asked, and the new parameters and state become the graph's outputs after the loss.
#ifndef PTO_JIT_PASSES_APPEND_OPTIMIZER_STEP_H_
#define PTO_JIT_PASSES_APPEND_OPTIMIZER_STEP_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "jit/ir/graph.h"
#include "pto/train.h"

namespace pto::jit {

// The per-step scalars, one f32 input vector of kOptimizerScalars entries, so a learning-rate
// schedule or Adam's bias correction changes no compiled code (OptimizerScalars fills it).
enum OptimizerScalar : int {
  kLearningRate = 0,
  // SGD: the momentum buffer's factor (0 at the first step, else momentum) and the gradient's
  // (1 at the first step, else 1 - dampening).
  kBufferKeep = 1,
  kGradientShare = 2,
  // Adam: lr / (1 - beta1^t) and sqrt(1 - beta2^t).
  kStepSize = 1,
  kSqrtBiasCorrection2 = 2,
  // AdamW: 1 - lr * weight_decay.
  kDecay = 3,
  kOptimizerScalars = 4,
};

// Writes the scalars of step number `step` (1 for the first) to `out` (kOptimizerScalars).
void FillOptimizerScalars(const Optimizer& optimizer, int64_t step, std::span<float> out);

// Optimizer state tensors per parameter: SGD 1 with momentum (else 0), Adam and AdamW 2 (the
// moments m and v).
int OptimizerStateCount(const Optimizer& optimizer);

struct OptimizerStepSpec {
  Optimizer optimizer;
  int parameters_input = -1;  // the flat parameters [P]
  int state_input = -1;       // the first of OptimizerStateCount flat state inputs, each [P]
  int scalars_input = -1;     // [kOptimizerScalars]
  // One node per parameter, in the flat layout's order: its gradient.
  std::vector<int> gradients;
};

// Sets the graph's outputs to {outputs[0] (the loss), the new parameters, the new state...}.
// InvalidArgument when an input's shape does not fit the layout.
absl::Status AppendOptimizerStep(ir::Graph& graph, const OptimizerStepSpec& spec);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_APPEND_OPTIMIZER_STEP_H_
