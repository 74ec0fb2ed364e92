#include "tools/bench/train_onednn_layers.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace pto::bench::train {

using dnnl::algorithm;
using dnnl::prop_kind;

Linear::Linear(Step& step, const Tensor& src, int w, int b, bool in_out, const Tensor& dst)
    : step_(step), src_(src), w_(w), b_(b) {
  const int64_t rows = src.dims[0], in = src.dims[1], out = dst.dims[1];
  w_md_ = in_out ? Strided({out, in}, {1, out}) : Plain({out, in});
  src_md_ = Plain({rows, in});
  dst_md_ = Plain({rows, out});
  b_md_ = Plain({out});
  fwd_ = dnnl::inner_product_forward::primitive_desc(
      dnnl::inner_product_forward::desc(prop_kind::forward_training, src_md_, w_md_, b_md_,
                                        dst_md_),
      Engine());
  const Parameter& pw = step.param(w);
  const Parameter& pb = step.param(b);
  step.Forward(dnnl::inner_product_forward(fwd_),
               {{DNNL_ARG_SRC, dnnl::memory(src_md_, Engine(), src.data)},
                {DNNL_ARG_WEIGHTS, dnnl::memory(w_md_, Engine(), pw.value.data)},
                {DNNL_ARG_BIAS, dnnl::memory(b_md_, Engine(), pb.value.data)},
                {DNNL_ARG_DST, dnnl::memory(dst_md_, Engine(), dst.data)}});
}

void Linear::Backward(const Tensor& ddst, const Tensor* dsrc) {
  const Parameter& pw = step_.param(w_);
  const Parameter& pb = step_.param(b_);
  const dnnl::memory ddst_mem(dst_md_, Engine(), ddst.data);
  dnnl::inner_product_backward_weights::primitive_desc weights_pd(
      dnnl::inner_product_backward_weights::desc(src_md_, w_md_, b_md_, dst_md_), Engine(), fwd_);
  step_.Backward(dnnl::inner_product_backward_weights(weights_pd),
                 {{DNNL_ARG_SRC, dnnl::memory(src_md_, Engine(), src_.data)},
                  {DNNL_ARG_DIFF_DST, ddst_mem},
                  {DNNL_ARG_DIFF_WEIGHTS, dnnl::memory(w_md_, Engine(), pw.grad.data)},
                  {DNNL_ARG_DIFF_BIAS, dnnl::memory(b_md_, Engine(), pb.grad.data)}});
  if (dsrc == nullptr) return;
  dnnl::inner_product_backward_data::primitive_desc data_pd(
      dnnl::inner_product_backward_data::desc(src_md_, w_md_, dst_md_), Engine(), fwd_);
  step_.Backward(dnnl::inner_product_backward_data(data_pd),
                 {{DNNL_ARG_DIFF_DST, ddst_mem},
                  {DNNL_ARG_WEIGHTS, dnnl::memory(w_md_, Engine(), pw.value.data)},
                  {DNNL_ARG_DIFF_SRC, dnnl::memory(src_md_, Engine(), dsrc->data)}});
}

namespace {
dnnl::normalization_flags ScaleShift() {
  return dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
}
constexpr float kLayerNormEps = 1e-5f;
}  // namespace

LayerNorm::LayerNorm(Step& step, const Tensor& src, int gamma, int beta, const Tensor& dst)
    : step_(step), src_(src), gamma_(gamma), beta_(beta) {
  fwd_ = dnnl::layer_normalization_forward::primitive_desc(
      dnnl::layer_normalization_forward::desc(prop_kind::forward_training, Plain(src.dims),
                                              kLayerNormEps, ScaleShift()),
      Engine());
  const Dims stats(src.dims.begin(), src.dims.end() - 1);
  mean_ = step.Workspace(stats);
  variance_ = step.Workspace(stats);
  const int64_t width = src.dims.back();
  step.Forward(dnnl::layer_normalization_forward(fwd_),
               {{DNNL_ARG_SRC, src.Mem()},
                {DNNL_ARG_SCALE, step.param(gamma).value.Mem({width})},
                {DNNL_ARG_SHIFT, step.param(beta).value.Mem({width})},
                {DNNL_ARG_MEAN, dnnl::memory(fwd_.mean_desc(), Engine(), mean_.data)},
                {DNNL_ARG_VARIANCE, dnnl::memory(fwd_.variance_desc(), Engine(), variance_.data)},
                {DNNL_ARG_DST, dst.Mem()}});
}

void LayerNorm::Backward(const Tensor& ddst, const Tensor& dsrc) {
  const dnnl::memory::desc md = Plain(src_.dims);
  dnnl::layer_normalization_backward::primitive_desc pd(
      dnnl::layer_normalization_backward::desc(prop_kind::backward, md, md, kLayerNormEps,
                                               ScaleShift()),
      Engine(), fwd_);
  const int64_t width = src_.dims.back();
  step_.Backward(dnnl::layer_normalization_backward(pd),
                 {{DNNL_ARG_SRC, src_.Mem()},
                  {DNNL_ARG_MEAN, dnnl::memory(fwd_.mean_desc(), Engine(), mean_.data)},
                  {DNNL_ARG_VARIANCE, dnnl::memory(fwd_.variance_desc(), Engine(), variance_.data)},
                  {DNNL_ARG_SCALE, step_.param(gamma_).value.Mem({width})},
                  {DNNL_ARG_SHIFT, step_.param(beta_).value.Mem({width})},
                  {DNNL_ARG_DIFF_DST, ddst.Mem()},
                  {DNNL_ARG_DIFF_SRC, dsrc.Mem()},
                  {DNNL_ARG_DIFF_SCALE, step_.param(gamma_).grad.Mem({width})},
                  {DNNL_ARG_DIFF_SHIFT, step_.param(beta_).grad.Mem({width})}});
}

Gelu::Gelu(Step& step, const Tensor& src, const Tensor& dst) : step_(step), src_(src) {
  fwd_ = dnnl::eltwise_forward::primitive_desc(
      dnnl::eltwise_forward::desc(prop_kind::forward_training, algorithm::eltwise_gelu_erf,
                                  Plain(src.dims)),
      Engine());
  step.Forward(dnnl::eltwise_forward(fwd_), {{DNNL_ARG_SRC, src.Mem()}, {DNNL_ARG_DST, dst.Mem()}});
}

void Gelu::Backward(const Tensor& ddst, const Tensor& dsrc) {
  const dnnl::memory::desc md = Plain(src_.dims);
  dnnl::eltwise_backward::primitive_desc pd(
      dnnl::eltwise_backward::desc(algorithm::eltwise_gelu_erf, md, md), Engine(), fwd_);
  step_.Backward(dnnl::eltwise_backward(pd), {{DNNL_ARG_SRC, src_.Mem()},
                                              {DNNL_ARG_DIFF_DST, ddst.Mem()},
                                              {DNNL_ARG_DIFF_SRC, dsrc.Mem()}});
}

Softmax::Softmax(Step& step, const Tensor& src, const Tensor& dst) : step_(step), dst_(dst) {
  const int axis = static_cast<int>(src.dims.size()) - 1;
  fwd_ = dnnl::softmax_forward::primitive_desc(
      dnnl::softmax_forward::desc(prop_kind::forward_training, Plain(src.dims), axis), Engine());
  step.Forward(dnnl::softmax_forward(fwd_), {{DNNL_ARG_SRC, src.Mem()}, {DNNL_ARG_DST, dst.Mem()}});
}

void Softmax::Backward(const Tensor& ddst, const Tensor& dsrc) {
  const dnnl::memory::desc md = Plain(dst_.dims);
  const int axis = static_cast<int>(dst_.dims.size()) - 1;
  dnnl::softmax_backward::primitive_desc pd(dnnl::softmax_backward::desc(md, md, axis), Engine(),
                                            fwd_);
  step_.Backward(dnnl::softmax_backward(pd), {{DNNL_ARG_DST, dst_.Mem()},
                                              {DNNL_ARG_DIFF_DST, ddst.Mem()},
                                              {DNNL_ARG_DIFF_SRC, dsrc.Mem()}});
}

Scale::Scale(Step& step, const Tensor& src, float alpha, const Tensor& dst)
    : step_(step), src_(src), alpha_(alpha) {
  fwd_ = dnnl::eltwise_forward::primitive_desc(
      dnnl::eltwise_forward::desc(prop_kind::forward_training, algorithm::eltwise_linear,
                                  Plain(src.dims), alpha, 0.0f),
      Engine());
  step.Forward(dnnl::eltwise_forward(fwd_), {{DNNL_ARG_SRC, src.Mem()}, {DNNL_ARG_DST, dst.Mem()}});
}

void Scale::Backward(const Tensor& ddst, const Tensor& dsrc) {
  const dnnl::memory::desc md = Plain(src_.dims);
  dnnl::eltwise_backward::primitive_desc pd(
      dnnl::eltwise_backward::desc(algorithm::eltwise_linear, md, md, alpha_, 0.0f), Engine(),
      fwd_);
  step_.Backward(dnnl::eltwise_backward(pd), {{DNNL_ARG_SRC, src_.Mem()},
                                              {DNNL_ARG_DIFF_DST, ddst.Mem()},
                                              {DNNL_ARG_DIFF_SRC, dsrc.Mem()}});
}

namespace {
void Append(Step& step, bool backward, const dnnl::primitive& p, Args args) {
  if (backward) {
    step.Backward(p, std::move(args));
  } else {
    step.Forward(p, std::move(args));
  }
}
}  // namespace

void Matmul(Step& step, bool backward, const dnnl::memory& src, const dnnl::memory& weights,
            const dnnl::memory& dst) {
  dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(src.get_desc(), weights.get_desc(), dst.get_desc()), Engine());
  Append(step, backward, dnnl::matmul(pd),
         {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
}

void Add(Step& step, bool backward, const dnnl::memory& a, const dnnl::memory& b,
         const dnnl::memory& dst) {
  dnnl::binary::primitive_desc pd(
      dnnl::binary::desc(algorithm::binary_add, a.get_desc(), b.get_desc(), dst.get_desc()),
      Engine());
  Append(step, backward, dnnl::binary(pd),
         {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, dst}});
}

void Copy(Step& step, bool backward, const dnnl::memory& from, const dnnl::memory& to) {
  Append(step, backward, dnnl::reorder(dnnl::reorder::primitive_desc(from, to)),
         {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

CrossEntropy::CrossEntropy(Step& step, const Tensor& logits, Labels labels)
    : step_(step), logits_(logits), labels_(std::move(labels)), state_(std::make_shared<State>()) {
  const int64_t batch = logits.dims[0];
  state_->row_loss.assign(batch, 0.0);
  state_->logsumexp.assign(batch, 0.0);
  step.ForwardLoop([logits = logits_, labels = labels_, state = state_] {
    const int64_t batch = logits.dims[0], classes = logits.dims[1];
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < batch; ++n) {
      const float* row = logits.data + n * classes;
      const float max = *std::max_element(row, row + classes);
      double sum = 0;
      for (int64_t c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(row[c] - max));
      state->logsumexp[n] = max + std::log(sum);
      state->row_loss[n] = state->logsumexp[n] - row[(*labels)[n]];
    }
    double total = 0;
    for (double l : state->row_loss) total += l;
    state->loss = total / static_cast<double>(batch);
  });
  step.SetLoss(&state_->loss);
}

void CrossEntropy::Backward(const Tensor& dlogits) {
  step_.BackwardLoop([logits = logits_, labels = labels_, state = state_, dlogits] {
    const int64_t batch = logits.dims[0], classes = logits.dims[1];
    const float inv_batch = 1.0f / static_cast<float>(batch);
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < batch; ++n) {
      const float* row = logits.data + n * classes;
      float* d = dlogits.data + n * classes;
      const float lse = static_cast<float>(state->logsumexp[n]);
      for (int64_t c = 0; c < classes; ++c) d[c] = std::exp(row[c] - lse) * inv_batch;
      d[(*labels)[n]] -= inv_batch;
    }
  });
}

void FillLabels(std::vector<int>& labels, int classes, uint64_t seed) {
  const int64_t count = static_cast<int64_t>(labels.size());
  std::vector<float> u(count);
  FillUniform(u.data(), count, 0.0f, static_cast<float>(classes), seed);
  for (int64_t i = 0; i < count; ++i)
    labels[i] = std::min(classes - 1, static_cast<int>(std::floor(u[i])));
}

}  // namespace pto::bench::train
