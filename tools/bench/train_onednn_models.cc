#include "tools/bench/train_onednn_models.h"

#include <cmath>
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
  step.Finish();
  return batch;
}

Batch BuildBlock(Step& step) {
  constexpr int64_t kBatch = 16, kSeq = 128, kModel = 128, kHeads = 4, kFf = 512, kClasses = 10;
  constexpr int64_t kRows = kBatch * kSeq, kDh = kModel / kHeads;
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
  // The causal mask as an addend: 0 where key <= query, -1e9 elsewhere. Adding -1e9 to a
  // score rounds to -1e9 (as pto's `where` sets it), and the softmax gives those positions
  // zero probability and zero gradient either way.
  const Tensor mask = step.Data({1, 1, kSeq, kSeq}, 0.0f, 0.0f, 0);
  for (int64_t i = 0; i < kSeq; ++i) {
    for (int64_t j = i + 1; j < kSeq; ++j) mask.data[i * kSeq + j] = -1e9f;
  }
  const Tensor mean_row = step.Data({1, 1, kSeq}, 1.0f / kSeq, 1.0f / kSeq, 0);
  step.ParametersDone();

  // Forward.
  const Dims heads{kBatch, kHeads, kSeq, kDh}, scores_dims{kBatch, kHeads, kSeq, kSeq};
  const Dims qkv_head_strides{kSeq * 3 * kModel, kDh, 3 * kModel, 1};
  const Dims qkv_head_t_strides{kSeq * 3 * kModel, kDh, 1, 3 * kModel};  // [b,h,dh,s] view
  const Dims merged_head_strides{kSeq * kModel, kDh, kModel, 1};
  const Dims scores_t_strides{kHeads * kSeq * kSeq, kSeq * kSeq, 1, kSeq};
  const Dims heads_t{kBatch, kHeads, kDh, kSeq};

  const Tensor h = step.Workspace({kRows, kModel});
  LayerNorm norm1(step, x, ln1.gamma, ln1.beta, h);
  const Tensor qkv = step.Workspace({kRows, 3 * kModel});
  Linear qkv_linear(step, h, qkv_p.w, qkv_p.b, false, qkv);
  const dnnl::memory q = qkv.View(heads, qkv_head_strides, 0);
  const dnnl::memory k = qkv.View(heads, qkv_head_strides, kModel);
  const dnnl::memory k_t = qkv.View(heads_t, qkv_head_t_strides, kModel);
  const dnnl::memory v = qkv.View(heads, qkv_head_strides, 2 * kModel);
  const dnnl::memory v_t = qkv.View(heads_t, qkv_head_t_strides, 2 * kModel);
  const Tensor scores = step.Workspace(scores_dims), scaled = step.Workspace(scores_dims),
               masked = step.Workspace(scores_dims), probs = step.Workspace(scores_dims);
  Matmul(step, false, q, k_t, scores.Mem());
  Scale scale(step, scores, 1.0f / std::sqrt(static_cast<float>(kDh)), scaled);
  Add(step, false, scaled.Mem(), mask.Mem(), masked.Mem());
  Softmax softmax(step, masked, probs);
  const Tensor attention = step.Workspace(heads), merged = step.Workspace({kRows, kModel});
  Matmul(step, false, probs.Mem(), v, attention.Mem());
  Copy(step, false, attention.Mem(), merged.View(heads, merged_head_strides));
  const Tensor projected = step.Workspace({kRows, kModel}), x2 = step.Workspace({kRows, kModel});
  Linear proj_linear(step, merged, proj_p.w, proj_p.b, false, projected);
  Add(step, false, x.Mem(), projected.Mem(), x2.Mem());
  const Tensor h2 = step.Workspace({kRows, kModel});
  LayerNorm norm2(step, x2, ln2.gamma, ln2.beta, h2);
  const Tensor up_pre = step.Workspace({kRows, kFf}), up = step.Workspace({kRows, kFf});
  Linear up_linear(step, h2, up_p.w, up_p.b, false, up_pre);
  Gelu gelu(step, up_pre, up);
  const Tensor down = step.Workspace({kRows, kModel}), out = step.Workspace({kRows, kModel});
  Linear down_linear(step, up, down_p.w, down_p.b, false, down);
  Add(step, false, x2.Mem(), down.Mem(), out.Mem());
  // Head: the mean over the sequence as a matmul of a row of 1/seq (broadcast over the batch)
  // with out [batch, seq, model] (oneDNN 2.6's reduction primitive runs its reference code on
  // this shape, several times slower), then linear and cross-entropy.
  const Tensor pooled = step.Workspace({kBatch, kModel});
  Matmul(step, false, mean_row.Mem(), out.Mem({kBatch, kSeq, kModel}),
         pooled.Mem({kBatch, 1, kModel}));
  const Tensor logits = step.Workspace({kBatch, kClasses});
  Linear head_linear(step, pooled, head_p.w, head_p.b, false, logits);
  CrossEntropy loss(step, logits, batch.labels);

  // Backward, in reverse.
  const Tensor dlogits = step.Workspace(logits.dims), dpooled = step.Workspace(pooled.dims);
  loss.Backward(dlogits);
  head_linear.Backward(dlogits, &dpooled);
  // The mean's gradient, a plain loop (a broadcast of dpooled / seq over the sequence).
  const Tensor dout = step.Workspace(out.dims);
  step.BackwardLoop([dpooled, dout] {
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < kRows; ++r) {
      const float* g = dpooled.data + (r / kSeq) * kModel;
      float* d = dout.data + r * kModel;
      for (int64_t c = 0; c < kModel; ++c) d[c] = g[c] * (1.0f / kSeq);
    }
  });
  const Tensor dup = step.Workspace(up.dims), dup_pre = step.Workspace(up.dims),
               dh2 = step.Workspace(h2.dims), dx2_norm = step.Workspace(x2.dims),
               dx2 = step.Workspace(x2.dims);
  down_linear.Backward(dout, &dup);
  gelu.Backward(dup, dup_pre);
  up_linear.Backward(dup_pre, &dh2);
  norm2.Backward(dh2, dx2_norm);
  Add(step, true, dout.Mem(), dx2_norm.Mem(), dx2.Mem());  // both paths into x2
  const Tensor dmerged = step.Workspace(merged.dims), dattention = step.Workspace(heads);
  proj_linear.Backward(dx2, &dmerged);
  Copy(step, true, dmerged.View(heads, merged_head_strides), dattention.Mem());
  const Tensor dprobs = step.Workspace(scores_dims), dmasked = step.Workspace(scores_dims),
               dscores = step.Workspace(scores_dims);
  const Tensor dq = step.Workspace(heads), dk = step.Workspace(heads), dv = step.Workspace(heads);
  Matmul(step, true, dattention.Mem(), v_t, dprobs.Mem());
  Matmul(step, true, probs.View(scores_dims, scores_t_strides), dattention.Mem(), dv.Mem());
  softmax.Backward(dprobs, dmasked);
  scale.Backward(dmasked, dscores);  // the mask's addend passes the gradient through
  Matmul(step, true, dscores.Mem(), k, dq.Mem());
  Matmul(step, true, dscores.View(scores_dims, scores_t_strides), q, dk.Mem());
  const Tensor dqkv = step.Workspace(qkv.dims), dh = step.Workspace(h.dims),
               dx = step.Workspace(x.dims);
  Copy(step, true, dq.Mem(), dqkv.View(heads, qkv_head_strides, 0));
  Copy(step, true, dk.Mem(), dqkv.View(heads, qkv_head_strides, kModel));
  Copy(step, true, dv.Mem(), dqkv.View(heads, qkv_head_strides, 2 * kModel));
  qkv_linear.Backward(dqkv, &dh);
  // oneDNN's layer-norm backward always computes the data gradient (x is data: dx unused).
  norm1.Backward(dh, dx);
  step.Finish();
  return batch;
}

}  // namespace pto::bench::train
