// Training steps: forward, backward and the optimizer's update as one Function
// (Runtime::JitTrainStep; docs/training.md, "The training step").
#ifndef PTO_TRAIN_H_
#define PTO_TRAIN_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "pto/tensor.h"

namespace pto {

class Function;
struct KernelProfile;

// The update applied to every parameter of a step, with PyTorch's semantics (torch.optim.SGD,
// Adam, AdamW in 1.13; clipping as torch.nn.utils.clip_grad_norm_).
struct Optimizer {
  enum class Kind : uint8_t { kSgd = 0, kAdam = 1, kAdamW = 2 };
  Kind kind = Kind::kAdamW;
  // The learning rate; TrainStep::set_learning_rate changes it between steps (a schedule)
  // without compiling anything.
  float lr = 1e-3f;
  // SGD: the momentum buffer b = momentum * b + (1 - dampening) * g (b = g at the first step);
  // Nesterov uses g + momentum * b. momentum 0: no buffer.
  float momentum = 0;
  float dampening = 0;
  bool nesterov = false;
  // Adam and AdamW: moment decay rates and the denominator's epsilon; bias-corrected.
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  // SGD and Adam add weight_decay * p to the gradient (L2); AdamW scales p by (1 - lr *
  // weight_decay) before its update (decoupled).
  float weight_decay = 0;
  // > 0: every gradient is scaled by min(1, max_grad_norm / (norm + 1e-6)) first, norm the L2
  // norm of all gradients together.
  float max_grad_norm = 0;
};

struct TrainStepOptions {
  // The loss lambda's inputs that are parameters, updated by the step; the others are data,
  // passed at every step.
  std::vector<int> parameters;
  Optimizer optimizer;
  // As GradientOptions::recompute_cheap_values.
  bool recompute_cheap_values = true;
};

// One compiled training step. It owns the parameters and the optimizer's state, each laid out
// end to end in one buffer, and updates them in place (donated to the step's Function): the
// optimizer is a few kernels for the whole parameter list. Not thread-safe: one step at a time.
class TrainStep {
 public:
  class Impl;
  explicit TrainStep(std::unique_ptr<Impl> impl);
  ~TrainStep();
  TrainStep(const TrainStep&) = delete;
  TrainStep& operator=(const TrainStep&) = delete;

  // Runs one step on the data inputs (the loss lambda's inputs that are not parameters, in
  // order) and returns the loss before the update. Allocates nothing once warm.
  absl::StatusOr<float> operator()(absl::Span<const TensorView> data);

  int num_parameters() const;
  // Parameter i (in TrainStepOptions::parameters' order), a view of the step's storage: read it
  // or write it between steps. A view with null data for an i out of [0, num_parameters()).
  TensorView parameter(int i) const;
  // Steps taken so far (Adam's bias correction counts them).
  int64_t steps() const;
  float learning_rate() const;
  void set_learning_rate(float lr);
  // The compiled step: inputs are the data, then the parameters, the optimizer state and the
  // step's scalars, each flat; outputs the loss, then the new parameters and state, in place.
  Function& function();
  // Runs `steps` steps on `data` (Function::Profile: one untimed first) and returns each kernel
  // of the step in execution order with its median time. The steps update the parameters.
  absl::StatusOr<std::vector<KernelProfile>> Profile(absl::Span<const TensorView> data,
                                                     int steps = 20);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace pto

#endif  // PTO_TRAIN_H_
