// Forward and backward layers of the oneDNN training step: each adds its primitives (or plain
// loops) to a Step's forward pass when made and to its backward pass by Backward(), every
// result in a buffer of its own. Only built with oneDNN.
#ifndef PTO_TOOLS_BENCH_TRAIN_ONEDNN_LAYERS_H_
#define PTO_TOOLS_BENCH_TRAIN_ONEDNN_LAYERS_H_

#include <memory>
#include <vector>

#include "tools/bench/train_onednn_step.h"

namespace pto::bench::train {

// dst [rows, out] = src [rows, in] W^T + b: inner product forward (training); backward: inner
// product backward weights (with the bias) and, when a dsrc is given, backward data. W has
// dims [out, in]: stored so (`in_out` false) or as [in, out] (`in_out` true).
class Linear {
 public:
  Linear(Step& step, const Tensor& src, int w, int b, bool in_out, const Tensor& dst);
  void Backward(const Tensor& ddst, const Tensor* dsrc);

 private:
  Step& step_;
  Tensor src_;
  int w_, b_;
  dnnl::memory::desc w_md_, src_md_, dst_md_, b_md_;
  dnnl::inner_product_forward::primitive_desc fwd_;
};

// dst = layer_norm(src) * gamma + beta over the last dim (eps 1e-5), src [rows, width].
class LayerNorm {
 public:
  LayerNorm(Step& step, const Tensor& src, int gamma, int beta, const Tensor& dst);
  // Backward (prop_kind::backward): dsrc, dgamma and dbeta.
  void Backward(const Tensor& ddst, const Tensor& dsrc);

 private:
  Step& step_;
  Tensor src_, mean_, variance_;
  int gamma_, beta_;
  dnnl::layer_normalization_forward::primitive_desc fwd_;
};

// dst = gelu(src), the exact (erf) form.
class Gelu {
 public:
  Gelu(Step& step, const Tensor& src, const Tensor& dst);
  void Backward(const Tensor& ddst, const Tensor& dsrc);

 private:
  Step& step_;
  Tensor src_;
  dnnl::eltwise_forward::primitive_desc fwd_;
};

// dst = softmax(src) over the last dim.
class Softmax {
 public:
  Softmax(Step& step, const Tensor& src, const Tensor& dst);
  void Backward(const Tensor& ddst, const Tensor& dsrc);

 private:
  Step& step_;
  Tensor dst_;
  dnnl::softmax_forward::primitive_desc fwd_;
};

// dst = alpha * src (eltwise_linear); backward: dsrc = alpha * ddst (eltwise backward).
class Scale {
 public:
  Scale(Step& step, const Tensor& src, float alpha, const Tensor& dst);
  void Backward(const Tensor& ddst, const Tensor& dsrc);

 private:
  Step& step_;
  Tensor src_;
  float alpha_;
  dnnl::eltwise_forward::primitive_desc fwd_;
};

// A matmul primitive over (possibly strided) views; `backward` adds it to the backward pass.
void Matmul(Step& step, bool backward, const dnnl::memory& src, const dnnl::memory& weights,
            const dnnl::memory& dst);
// dst = a + b (binary_add, b broadcast along dims where it has size 1).
void Add(Step& step, bool backward, const dnnl::memory& a, const dnnl::memory& b,
         const dnnl::memory& dst);
// A reorder (a copy between layouts, here to merge or split attention heads).
void Copy(Step& step, bool backward, const dnnl::memory& from, const dnnl::memory& to);

// Int labels, shared by the loss's loops and whoever refills them between steps.
using Labels = std::shared_ptr<std::vector<int>>;

// The mean cross-entropy of logits [batch, classes] against int labels, as plain OpenMP loops
// (oneDNN 2.6 has no loss primitive): the forward loop computes each row's logsumexp and the
// loss (summed in double); the backward loop writes dlogits = (softmax - one_hot) / batch.
class CrossEntropy {
 public:
  CrossEntropy(Step& step, const Tensor& logits, Labels labels);
  void Backward(const Tensor& dlogits);
  const double* loss() const { return &state_->loss; }

 private:
  struct State {
    std::vector<double> row_loss, logsumexp;
    double loss = 0;
  };
  Step& step_;
  Tensor logits_;
  Labels labels_;
  std::shared_ptr<State> state_;
};

// Labels in [0, classes) from FillUniform(0, classes) rounded down, over all of `labels`.
void FillLabels(std::vector<int>& labels, int classes, uint64_t seed);

}  // namespace pto::bench::train

#endif  // PTO_TOOLS_BENCH_TRAIN_ONEDNN_LAYERS_H_
