// A training step composed as a oneDNN user would compose it: primitives created once, each
// writing its result to a buffer of its own (no fusion), plus plain OpenMP loops where oneDNN
// 2.6 has no primitive (cross-entropy and its gradient, the sequence mean's gradient, AdamW).
// The step owns its tensors, its parameters with their gradients and AdamW state, and runs as
// three passes: forward (ending in the loss), backward (every parameter's gradient, overwritten
// each step) and the update. Only built with oneDNN.
#ifndef PTO_TOOLS_BENCH_TRAIN_ONEDNN_STEP_H_
#define PTO_TOOLS_BENCH_TRAIN_ONEDNN_STEP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dnnl.hpp"
#include "tools/bench/buffers.h"
#include "tools/bench/onednn_chain.h"

namespace pto::bench::train {

// Dims, Args, Plain and Strided come from onednn_chain.h; the engine is its CpuEngine().
inline dnnl::engine& Engine() { return CpuEngine(); }

// A float buffer the step owns, with its row-major dims.
struct Tensor {
  float* data = nullptr;
  Dims dims;
  int64_t size() const;
  // A memory over the data as `dims` (default: the tensor's own), or as a strided view
  // starting `offset` elements in.
  dnnl::memory Mem() const { return Mem(dims); }
  dnnl::memory Mem(const Dims& as) const;
  dnnl::memory View(const Dims& as, const Dims& strides, int64_t offset = 0) const;
};

struct Parameter {
  std::string name;
  Tensor value, grad, m, v;  // grad and m, v (AdamW's moments): by ParametersDone
};

struct AdamWConfig {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.01f;
};

class Step {
 public:
  Step(int threads, AdamWConfig adamw);

  // A parameter, values uniform in [lo, hi) from `seed` (FillUniform), or all `lo` when
  // lo == hi. Returns its index.
  int AddParameter(const std::string& name, const Dims& dims, float lo, float hi, uint64_t seed);
  Parameter& param(int index) { return params_[index]; }
  std::vector<Parameter>& params() { return params_; }
  // Records the resident size once the parameters (and the batch) are in memory, allocates
  // AdamW's moments (zeroed) and records it again, then allocates the gradients. The memory
  // figures count from these two. Layers are made after it.
  void ParametersDone();
  int64_t resident_after_parameters() const { return resident_after_parameters_; }
  int64_t resident_after_state() const { return resident_after_state_; }
  // Synthetic data (the batch), filled as AddParameter fills.
  Tensor Data(const Dims& dims, float lo, float hi, uint64_t seed);
  // An activation or gradient buffer, zeroed.
  Tensor Workspace(const Dims& dims);

  void Forward(const dnnl::primitive& primitive, Args args);
  void Backward(const dnnl::primitive& primitive, Args args);
  void ForwardLoop(std::function<void()> loop);
  void BackwardLoop(std::function<void()> loop);
  // Where the forward pass leaves the loss.
  void SetLoss(const double* loss) { loss_ = loss; }

  double RunForward();  // returns the loss
  void RunBackward();
  void RunUpdate();  // one AdamW step over every parameter
  double Train() {
    const double loss = RunForward();
    RunBackward();
    RunUpdate();
    return loss;
  }

  int threads() const { return threads_; }
  int64_t parameter_bytes() const { return parameter_bytes_; }
  int64_t workspace_bytes() const { return workspace_bytes_; }
  int64_t state_bytes() const { return state_bytes_; }  // gradients and AdamW moments

 private:
  using Pass = std::vector<std::function<void()>>;
  Tensor Allocate(const Dims& dims);
  void Run(const Pass& pass);

  int threads_;
  AdamWConfig adamw_;
  int64_t t_ = 0;  // updates made
  dnnl::stream stream_;
  std::vector<AlignedFloats> storage_;
  std::vector<Parameter> params_;
  std::vector<dnnl::primitive> primitives_;
  Pass forward_, backward_;
  const double* loss_ = nullptr;
  int64_t parameter_bytes_ = 0, workspace_bytes_ = 0, state_bytes_ = 0;
  int64_t resident_after_parameters_ = -1, resident_after_state_ = -1;
};

}  // namespace pto::bench::train

#endif  // PTO_TOOLS_BENCH_TRAIN_ONEDNN_STEP_H_
