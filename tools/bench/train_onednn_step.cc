#include "tools/bench/train_onednn_step.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "tools/bench/process_memory.h"

namespace pto::bench::train {

int64_t Tensor::size() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

dnnl::memory Tensor::Mem(const Dims& as) const { return dnnl::memory(Plain(as), Engine(), data); }

dnnl::memory Tensor::View(const Dims& as, const Dims& strides, int64_t offset) const {
  return dnnl::memory(Strided(as, strides), Engine(), data + offset);
}

Step::Step(int threads, AdamWConfig adamw) : threads_(threads), adamw_(adamw), stream_(Engine()) {
  omp_set_num_threads(threads);
}

Tensor Step::Allocate(const Dims& dims) {
  Tensor t{nullptr, dims};
  storage_.emplace_back(t.size());
  t.data = storage_.back().data();
  std::fill(t.data, t.data + t.size(), 0.0f);
  return t;
}

int Step::AddParameter(const std::string& name, const Dims& dims, float lo, float hi,
                       uint64_t seed) {
  Parameter p;
  p.name = name;
  p.value = Data(dims, lo, hi, seed);
  parameter_bytes_ += p.value.size() * 4;
  params_.push_back(std::move(p));
  return static_cast<int>(params_.size()) - 1;
}

void Step::ParametersDone() {
  resident_after_parameters_ = ProcStatusBytes("VmRSS");
  for (Parameter& p : params_) {
    p.m = Allocate(p.value.dims);
    p.v = Allocate(p.value.dims);
    state_bytes_ += 2 * p.value.size() * 4;
  }
  resident_after_state_ = ProcStatusBytes("VmRSS");
  for (Parameter& p : params_) {
    p.grad = Allocate(p.value.dims);
    state_bytes_ += p.grad.size() * 4;
  }
}

Tensor Step::Data(const Dims& dims, float lo, float hi, uint64_t seed) {
  Tensor t = Allocate(dims);
  if (lo == hi) {
    std::fill(t.data, t.data + t.size(), lo);
  } else {
    FillUniform(t.data, t.size(), lo, hi, seed);
  }
  return t;
}

Tensor Step::Workspace(const Dims& dims) {
  Tensor t = Allocate(dims);
  workspace_bytes_ += t.size() * 4;
  return t;
}

void Step::Forward(const dnnl::primitive& primitive, Args args) {
  primitives_.push_back(primitive);
  forward_.push_back(
      [this, primitive, args = std::move(args)] { primitive.execute(stream_, args); });
}

void Step::Backward(const dnnl::primitive& primitive, Args args) {
  primitives_.push_back(primitive);
  backward_.push_back(
      [this, primitive, args = std::move(args)] { primitive.execute(stream_, args); });
}

void Step::ForwardLoop(std::function<void()> loop) { forward_.push_back(std::move(loop)); }
void Step::BackwardLoop(std::function<void()> loop) { backward_.push_back(std::move(loop)); }

void Step::Run(const Pass& pass) {
  for (const auto& call : pass) {
    call();
    stream_.wait();  // a loop after a primitive reads its result
  }
}

double Step::RunForward() {
  Run(forward_);
  return *loss_;
}

void Step::RunBackward() { Run(backward_); }

// torch.optim.AdamW's update (decoupled weight decay, bias-corrected moments), as a plain
// OpenMP loop per parameter tensor: one pass reading and writing value, m and v.
void Step::RunUpdate() {
  ++t_;
  const AdamWConfig c = adamw_;
  const float decay = 1.0f - c.lr * c.weight_decay;
  const float step_size = c.lr / (1.0f - std::pow(c.beta1, static_cast<float>(t_)));
  const float root_correction2 = std::sqrt(1.0f - std::pow(c.beta2, static_cast<float>(t_)));
  for (Parameter& p : params_) {
    float* __restrict w = p.value.data;
    float* __restrict m = p.m.data;
    float* __restrict v = p.v.data;
    const float* __restrict g = p.grad.data;
    const int64_t n = p.value.size();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      m[i] = c.beta1 * m[i] + (1.0f - c.beta1) * g[i];
      v[i] = c.beta2 * v[i] + (1.0f - c.beta2) * g[i] * g[i];
      const float denom = std::sqrt(v[i]) / root_correction2 + c.eps;
      w[i] = w[i] * decay - step_size * m[i] / denom;
    }
  }
}

}  // namespace pto::bench::train
