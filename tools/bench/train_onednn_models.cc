#include "tools/bench/train_onednn_models.h"

#include <cmath>
#include <optional>
#include <string>

#include "tools/bench/train_onednn_layers.h"

namespace pto::bench::train {
namespace {

// A linear layer's weight and bias, uniform in +-1/sqrt(in) (torch.nn.Linear's default).
struct LinearParams {
  int w, b;
};
// w has dims [in, out] when `in_out`, else [out, in]; the bias's seed follows the weight's.
LinearParams AddLinearParams(Step& step, const std::string& name, int64_t in, int64_t out,
                             bool in_out, uint64_t w_seed) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(in));
  const Dims w_dims = in_out ? Dims{in, out} : Dims{out, in};
  const int w = step.AddParameter(name + "_w", w_dims, -bound, bound, w_seed);
  const int b = step.AddParameter(name + "_b", {out}, -bound, bound, w_seed + 1);
  return {w, b};
}

// Layer-norm scale 1 and shift 0 (torch.nn.LayerNorm's default).
struct NormParams {
  int gamma, beta;
};
NormParams AddNormParams(Step& step, const std::string& name, int64_t width) {
  return {step.AddParameter(name + "_w", {width}, 1.0f, 1.0f, 0),
          step.AddParameter(name + "_b", {width}, 0.0f, 0.0f, 0)};
}

Batch MakeBatch(Step& step, const Dims& x_dims, int64_t examples, int classes) {
  Batch batch{step.Data(x_dims, 0.0f, 0.0f, 0),
              std::make_shared<std::vector<int>>(static_cast<size_t>(examples)), classes};
  FillBatch(batch, 0);
  return batch;
}

}  // namespace

void FillBatch(const Batch& batch, int64_t index) {
  const uint64_t x_seed = index == 0 ? 1 : 1000 + 2 * index;
  const float bound = std::sqrt(3.0f);
  FillUniform(batch.x.data, batch.x.size(), -bound, bound, x_seed);
  FillLabels(*batch.labels, batch.classes, x_seed + 1);
}

Batch BuildMlp(Step& step) {
  constexpr int64_t kBatch = 64, kIn = 1024, kHidden = 4096, kClasses = 1024;
  const Batch batch = MakeBatch(step, {kBatch, kIn}, kBatch, kClasses);
  const Tensor& x = batch.x;
  // w stored [in, out]: y = x w + b.
  const LinearParams l1 = AddLinearParams(step, "fc1", kIn, kHidden, true, 3);
  const LinearParams l2 = AddLinearParams(step, "fc2", kHidden, kClasses, true, 5);
  step.ParametersDone();

  const Tensor h = step.Workspace({kBatch, kHidden}), a = step.Workspace({kBatch, kHidden});
  const Tensor logits = step.Workspace({kBatch, kClasses});
  Linear linear1(step, x, l1.w, l1.b, /*in_out=*/true, h);
  Gelu gelu(step, h, a);
  Linear linear2(step, a, l2.w, l2.b, /*in_out=*/true, logits);
  CrossEntropy loss(step, logits, batch.labels);

  const Tensor dlogits = step.Workspace(logits.dims), da = step.Workspace(a.dims),
               dh = step.Workspace(h.dims);
  loss.Backward(dlogits);
  linear2.Backward(dlogits, &da);
  gelu.Backward(da, dh);
  linear1.Backward(dh, nullptr);  // x is data: no gradient
  return batch;
}

namespace {

// Multi-head attention with a causal mask: the heads of qkv [batch * seq, 3 * model] as
// strided views, scores = q k^T (batched matmul), scaled (eltwise linear), masked (binary add of
// a [1, 1, seq, seq] tensor of 0 and -1e9: the sum rounds to -1e9 as pto's `where` sets it, and
// the softmax gives those positions zero probability and zero gradient either way), softmax,
// times v, and the heads merged into `merged` [batch * seq, model] by a reorder.
class CausalAttention {
 public:
  CausalAttention(Step& step, const Tensor& qkv, const Tensor& merged, int64_t batch,
                  int64_t heads);
  // dqkv from dmerged: the heads split by a reorder, dP = dA v^T, dV = P^T dA, softmax and
  // scale backward, dQ = dS k, dK = dS^T q, and three reorders into dqkv's columns.
  void Backward(const Tensor& dmerged, const Tensor& dqkv);

 private:
  dnnl::memory QkvView(const Tensor& t, int part, bool transposed) const {
    return transposed ? t.View(heads_t_, {seq_ * 3 * model_, dh_, 1, 3 * model_}, part * model_)
                      : t.View(heads_, {seq_ * 3 * model_, dh_, 3 * model_, 1}, part * model_);
  }
  dnnl::memory MergedView(const Tensor& t) const {
    return t.View(heads_, {seq_ * model_, dh_, model_, 1});
  }
  dnnl::memory Transposed(const Tensor& scores) const {
    return scores.View(scores_, {scores_[1] * seq_ * seq_, seq_ * seq_, 1, seq_});
  }

  Step& step_;
  const int64_t seq_, model_, dh_;
  const Dims heads_, heads_t_, scores_;
  Tensor qkv_, probs_;
  std::optional<Scale> scale_;
  std::optional<Softmax> softmax_;
};

CausalAttention::CausalAttention(Step& step, const Tensor& qkv, const Tensor& merged, int64_t batch,
                                 int64_t heads)
    : step_(step),
      seq_(qkv.dims[0] / batch),
      model_(merged.dims[1]),
      dh_(model_ / heads),
      heads_{batch, heads, seq_, dh_},
      heads_t_{batch, heads, dh_, seq_},
      scores_{batch, heads, seq_, seq_},
      qkv_(qkv) {
  const Tensor mask = step.Data({1, 1, seq_, seq_}, 0.0f, 0.0f, 0);
  for (int64_t i = 0; i < seq_; ++i) {
    for (int64_t j = i + 1; j < seq_; ++j) mask.data[i * seq_ + j] = -1e9f;
  }
  const Tensor scores = step.Workspace(scores_), scaled = step.Workspace(scores_),
               masked = step.Workspace(scores_), attention = step.Workspace(heads_);
  probs_ = step.Workspace(scores_);
  Matmul(step, false, QkvView(qkv, 0, false), QkvView(qkv, 1, true), scores.Mem());
  scale_.emplace(step, scores, 1.0f / std::sqrt(static_cast<float>(dh_)), scaled);
  Add(step, false, scaled.Mem(), mask.Mem(), masked.Mem());
  softmax_.emplace(step, masked, probs_);
  Matmul(step, false, probs_.Mem(), QkvView(qkv, 2, false), attention.Mem());
  Copy(step, false, attention.Mem(), MergedView(merged));
}

void CausalAttention::Backward(const Tensor& dmerged, const Tensor& dqkv) {
  const Tensor dattention = step_.Workspace(heads_), dprobs = step_.Workspace(scores_),
               dmasked = step_.Workspace(scores_), dscores = step_.Workspace(scores_);
  const Tensor dq = step_.Workspace(heads_), dk = step_.Workspace(heads_),
               dv = step_.Workspace(heads_);
  Copy(step_, true, MergedView(dmerged), dattention.Mem());
  Matmul(step_, true, dattention.Mem(), QkvView(qkv_, 2, true), dprobs.Mem());
  Matmul(step_, true, Transposed(probs_), dattention.Mem(), dv.Mem());
  softmax_->Backward(dprobs, dmasked);
  scale_->Backward(dmasked, dscores);  // the mask's addend passes the gradient through
  Matmul(step_, true, dscores.Mem(), QkvView(qkv_, 1, false), dq.Mem());
  Matmul(step_, true, Transposed(dscores), QkvView(qkv_, 0, false), dk.Mem());
  Copy(step_, true, dq.Mem(), QkvView(dqkv, 0, false));
  Copy(step_, true, dk.Mem(), QkvView(dqkv, 1, false));
  Copy(step_, true, dv.Mem(), QkvView(dqkv, 2, false));
}

// pooled [batch, model] = the mean over the sequence of x [batch * seq, model]: a matmul of a
// [1, 1, seq] row of 1/seq broadcast over the batch (oneDNN 2.6's reduction primitive runs its
// reference code on this shape, several times slower). Backward: a plain loop broadcasting
// dpooled / seq over the sequence.
class SequenceMean {
 public:
  SequenceMean(Step& step, const Tensor& x, const Tensor& pooled) : step_(step) {
    const int64_t batch = pooled.dims[0], model = pooled.dims[1], seq = x.dims[0] / batch;
    const Tensor row = step.Data({1, 1, seq}, 1.0f / seq, 1.0f / seq, 0);
    Matmul(step, false, row.Mem(), x.Mem({batch, seq, model}), pooled.Mem({batch, 1, model}));
  }
  void Backward(const Tensor& dpooled, const Tensor& dx) {
    step_.BackwardLoop([dpooled, dx] {
      const int64_t rows = dx.dims[0], model = dx.dims[1], seq = rows / dpooled.dims[0];
      const float scale = 1.0f / static_cast<float>(seq);
#pragma omp parallel for schedule(static)
      for (int64_t r = 0; r < rows; ++r) {
        const float* g = dpooled.data + (r / seq) * model;
        float* d = dx.data + r * model;
        for (int64_t c = 0; c < model; ++c) d[c] = g[c] * scale;
      }
    });
  }

 private:
  Step& step_;
};

}  // namespace

Batch BuildBlock(Step& step) {
  constexpr int64_t kBatch = 16, kSeq = 128, kModel = 128, kHeads = 4, kFf = 512, kClasses = 10;
  constexpr int64_t kRows = kBatch * kSeq;
  const Batch batch = MakeBatch(step, {kRows, kModel}, kBatch, kClasses);
  const Tensor& x = batch.x;
  // The order and shapes of tools/pto/transformer_block.cc's WeightShapes ([out, in]).
  const NormParams ln1 = AddNormParams(step, "ln1", kModel);
  const LinearParams qkv_p = AddLinearParams(step, "qkv", kModel, 3 * kModel, false, 3);
  const LinearParams proj_p = AddLinearParams(step, "proj", kModel, kModel, false, 5);
  const NormParams ln2 = AddNormParams(step, "ln2", kModel);
  const LinearParams up_p = AddLinearParams(step, "up", kModel, kFf, false, 7);
  const LinearParams down_p = AddLinearParams(step, "down", kFf, kModel, false, 9);
  const LinearParams head_p = AddLinearParams(step, "head", kModel, kClasses, false, 11);
  step.ParametersDone();

  auto rows_of = [&](int64_t width) { return step.Workspace({kRows, width}); };
  const Tensor h = rows_of(kModel), qkv = rows_of(3 * kModel), merged = rows_of(kModel),
               projected = rows_of(kModel), x2 = rows_of(kModel), h2 = rows_of(kModel),
               up_pre = rows_of(kFf), up = rows_of(kFf), down = rows_of(kModel),
               out = rows_of(kModel);
  const Tensor pooled = step.Workspace({kBatch, kModel}),
               logits = step.Workspace({kBatch, kClasses});
  LayerNorm norm1(step, x, ln1.gamma, ln1.beta, h);
  Linear qkv_linear(step, h, qkv_p.w, qkv_p.b, false, qkv);
  CausalAttention attention(step, qkv, merged, kBatch, kHeads);
  Linear proj_linear(step, merged, proj_p.w, proj_p.b, false, projected);
  Add(step, false, x.Mem(), projected.Mem(), x2.Mem());
  LayerNorm norm2(step, x2, ln2.gamma, ln2.beta, h2);
  Linear up_linear(step, h2, up_p.w, up_p.b, false, up_pre);
  Gelu gelu(step, up_pre, up);
  Linear down_linear(step, up, down_p.w, down_p.b, false, down);
  Add(step, false, x2.Mem(), down.Mem(), out.Mem());
  SequenceMean mean(step, out, pooled);
  Linear head_linear(step, pooled, head_p.w, head_p.b, false, logits);
  CrossEntropy loss(step, logits, batch.labels);

  // Backward, in reverse.
  const Tensor dlogits = step.Workspace(logits.dims), dpooled = step.Workspace(pooled.dims);
  const Tensor dout = rows_of(kModel), dup = rows_of(kFf), dup_pre = rows_of(kFf),
               dh2 = rows_of(kModel), dx2_norm = rows_of(kModel), dx2 = rows_of(kModel),
               dmerged = rows_of(kModel), dqkv = rows_of(3 * kModel), dh = rows_of(kModel),
               dx = rows_of(kModel);
  loss.Backward(dlogits);
  head_linear.Backward(dlogits, &dpooled);
  mean.Backward(dpooled, dout);
  down_linear.Backward(dout, &dup);
  gelu.Backward(dup, dup_pre);
  up_linear.Backward(dup_pre, &dh2);
  norm2.Backward(dh2, dx2_norm);
  Add(step, true, dout.Mem(), dx2_norm.Mem(), dx2.Mem());  // both paths into x2
  proj_linear.Backward(dx2, &dmerged);
  attention.Backward(dmerged, dqkv);
  qkv_linear.Backward(dqkv, &dh);
  // oneDNN's layer-norm backward always computes the data gradient (x is data: dx unused).
  norm1.Backward(dh, dx);
  return batch;
}

}  // namespace pto::bench::train
