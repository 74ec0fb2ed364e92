#include "tools/bench/bench_shapes.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "jit/trace.h"
#include "tools/bench/baselines_libxsmm.h"
#include "tools/bench/baselines_onednn.h"
#include "tools/bench/baselines_openblas.h"
#include "tools/pto/transformer_block.h"

namespace pto::bench {
namespace {

constexpr double kF = sizeof(float);

CaseSpec Matmul(std::string group, std::string name, MatmulShape s, bool quick,
                TargetClass target) {
  CaseSpec c;
  c.group = std::move(group);
  c.name = std::move(name);
  c.target = target;
  const bool batched = s.batch > 1;
  auto dims = [&](int64_t r, int64_t k) {
    return batched ? std::vector<int64_t>{s.batch, r, k} : std::vector<int64_t>{r, k};
  };
  c.inputs = {{dims(s.m, s.k)}, {dims(s.k, s.n)}};
  c.outputs = {dims(s.m, s.n)};
  c.flops = 2.0 * s.batch * s.m * s.k * s.n;
  c.bytes = kF * s.batch * (s.m * s.k + s.k * s.n + s.m * s.n);
  c.quick = quick;
  c.trace = [](std::span<const Value> v) { return std::vector<Value>{matmul(v[0], v[1])}; };
  if (s.constant_b) c.constant_inputs = {1};
  c.baselines[static_cast<int>(Column::kOnednn)] = OnednnMatmul(s);
  c.baselines[static_cast<int>(Column::kOpenblas)] = OpenblasMatmul(s);
  return c;
}

std::string Mkn(int64_t m, int64_t k, int64_t n) { return absl::StrCat(m, "x", k, "x", n); }

// The target a square matmul or a linear of M rows is held to.
TargetClass RowsTarget(int64_t m) {
  if (m == 1) return TargetClass::kOneRowLinear;
  return m < 128 ? TargetClass::kFewRowsLinear : TargetClass::kLargeMatmul;
}

void AddMatmuls(std::vector<CaseSpec>& cases) {
  for (int64_t n : {256, 512, 1024, 2048}) {
    cases.push_back(Matmul("square matmul", "matmul " + Mkn(n, n, n), {1, n, n, n, false}, n == 512,
                           RowsTarget(n)));
  }
  cases.push_back(Matmul("square matmul", "matmul " + Mkn(384, 64, 384), {1, 384, 64, 384, false},
                         false, RowsTarget(384)));
  const std::pair<int64_t, int64_t> kn[] = {{768, 768}, {768, 3072}, {3072, 768}, {4096, 4096}};
  for (auto [k, n] : kn) {
    for (int64_t m : {1, 8, 32, 128, 512}) {
      const bool quick = (m == 1 || m == 128) && k == 768 && n == 3072;
      cases.push_back(Matmul("transformer linear (x·W, W constant)", "linear " + Mkn(m, k, n),
                             {1, m, k, n, true}, quick, RowsTarget(m)));
    }
  }
  // Small shapes, with LIBXSMM (at 1 thread) beside the others.
  const MatmulShape small[] = {{1, 23, 29, 31, false},    {1, 64, 64, 64, false},
                               {1, 17, 33, 65, false},    {1, 48, 96, 40, false},
                               {1, 100, 100, 100, false}, {1, 128, 27, 128, false}};
  for (const MatmulShape& s : small) {
    CaseSpec c = Matmul("small odd matmul", "matmul " + Mkn(s.m, s.k, s.n), s, s.m == 23,
                        TargetClass::kSmallOdd);
    c.baselines[static_cast<int>(Column::kLibxsmm)] = LibxsmmMatmul(s);
    cases.push_back(std::move(c));
  }
  cases.push_back(Matmul("batched matmul", "bmm 12x128x64x128", {12, 128, 64, 128, false}, true,
                         TargetClass::kNone));
}

CaseSpec MemoryCase(std::string group, TargetClass target, std::string name,
                    std::vector<InputSpec> inputs, int64_t rows, int64_t cols,
                    double flops_per_element, TraceFn trace) {
  CaseSpec c;
  c.group = std::move(group);
  c.target = target;
  c.name = std::move(name);
  c.inputs = std::move(inputs);
  c.outputs = {{rows, cols}};
  c.memory_bound = true;
  double elements = static_cast<double>(rows * cols);
  for (const InputSpec& in : c.inputs) {
    double n = 1;
    for (int64_t d : in.shape) n *= static_cast<double>(d);
    elements += n;
  }
  c.bytes = kF * elements;
  c.flops = flops_per_element * rows * cols;
  c.trace = std::move(trace);
  return c;
}

void AddMemoryBound(std::vector<CaseSpec>& cases) {
  const int64_t r = 4096, n = 4096;
  const std::vector<int64_t> x{r, n}, v{n};
  const std::string shape = absl::StrCat(r, "x", n);
  const char* op_group = "memory-bound op";
  CaseSpec gelu =
      MemoryCase(op_group, TargetClass::kMemoryOp, "gelu " + shape, {{x, -3, 3}}, r, n, 20,
                 [](std::span<const Value> in) { return std::vector<Value>{pto::gelu(in[0])}; });
  gelu.quick = true;
  gelu.baselines[0] = OnednnRowOp(RowOp::kGelu, r, n);
  cases.push_back(std::move(gelu));
  CaseSpec sm =
      MemoryCase(op_group, TargetClass::kMemoryOp, "softmax " + shape, {{x, -4, 4}}, r, n, 5,
                 [](std::span<const Value> in) { return std::vector<Value>{softmax(in[0])}; });
  sm.baselines[0] = OnednnRowOp(RowOp::kSoftmax, r, n);
  cases.push_back(std::move(sm));
  CaseSpec ln = MemoryCase(op_group, TargetClass::kMemoryOp, "layernorm " + shape,
                           {{x}, {v, 0.5f, 1.5f}, {v}}, r, n, 8, [](std::span<const Value> in) {
                             return std::vector<Value>{layer_norm(in[0], in[1], in[2])};
                           });
  ln.baselines[0] = OnednnRowOp(RowOp::kLayerNorm, r, n);
  cases.push_back(std::move(ln));

  const char* chain_group = "memory-bound chain (oneDNN: unfused | post-ops)";
  CaseSpec bgr = MemoryCase(chain_group, TargetClass::kMemoryChain, "bias+gelu+residual " + shape,
                            {{x, -3, 3}, {v}, {x}}, r, n, 22, [](std::span<const Value> in) {
                              return std::vector<Value>{pto::gelu(in[0] + in[1]) + in[2]};
                            });
  bgr.quick = true;
  bgr.baselines[0] = OnednnBiasGeluResidual(r, n, false);
  bgr.baselines[1] = OnednnBiasGeluResidual(r, n, true);
  bgr.onnx = {"bias_gelu_residual", "{}"};
  cases.push_back(std::move(bgr));
  CaseSpec lss = MemoryCase(
      chain_group, TargetClass::kMemoryChain, "layernorm*scale+shift " + shape,
      {{x}, {v, 0.5f, 1.5f}, {v}, {v, 0.5f, 1.5f}, {v}}, r, n, 10, [](std::span<const Value> in) {
        return std::vector<Value>{layer_norm(in[0], in[1], in[2]) * in[3] + in[4]};
      });
  lss.baselines[0] = OnednnLayerNormScaleShift(r, n, false);
  lss.baselines[1] = OnednnLayerNormScaleShift(r, n, true);
  lss.onnx = {"layernorm_scale_shift", R"({"eps": 1e-5})"};
  cases.push_back(std::move(lss));
  constexpr float kScale = 0.125f;
  CaseSpec msm = MemoryCase(chain_group, TargetClass::kMemoryChain, "softmax(x*s+mask) " + shape,
                            {{x, -8, 8}, {x, -4, 0}}, r, n, 7, [](std::span<const Value> in) {
                              return std::vector<Value>{softmax(in[0] * kScale + in[1])};
                            });
  msm.baselines[0] = OnednnScaledMaskedSoftmax(r, n, kScale, false);
  msm.baselines[1] = OnednnScaledMaskedSoftmax(r, n, kScale, true);
  msm.onnx = {"softmax_scale_mask", absl::StrCat(R"({"scale": )", kScale, "}")};
  cases.push_back(std::move(msm));
}

// A backward row op (internal: recorded in the running trace, as the gradient pass does).
Value RowGradOp(ir::OpKind op, std::vector<Value> inputs) {
  return inputs[0].state()->AddNode(op, ir::Attrs{}, inputs);
}

// The backward row ops, each one kernel, and layer_norm_grad's dx also as the chain of forward
// ops that computes it (reductions, then elementwise work over the row).
void AddBackwardRowOps(std::vector<CaseSpec>& cases) {
  const int64_t r = 4096, n = 1024;
  const std::vector<int64_t> x{r, n}, v{n};
  const std::string shape = absl::StrCat(r, "x", n);
  const char* group = "backward row op";
  using ir::OpKind;
  cases.push_back(
      MemoryCase(group, TargetClass::kNone, "softmax_grad " + shape, {{x, 0, 1}, {x}}, r, n, 4,
                 [](std::span<const Value> in) {
                   return std::vector<Value>{RowGradOp(OpKind::kSoftmaxGrad, {in[0], in[1]})};
                 }));
  cases.push_back(
      MemoryCase(group, TargetClass::kNone, "log_softmax_grad " + shape, {{x, -8, 0}, {x}}, r, n, 4,
                 [](std::span<const Value> in) {
                   return std::vector<Value>{RowGradOp(OpKind::kLogSoftmaxGrad, {in[0], in[1]})};
                 }));
  const std::vector<InputSpec> norm_inputs = {{x}, {v, 0.5f, 1.5f}, {x}};
  cases.push_back(MemoryCase(
      group, TargetClass::kNone, "layer_norm_grad " + shape, norm_inputs, r, n, 14,
      [](std::span<const Value> in) {
        return std::vector<Value>{RowGradOp(OpKind::kLayerNormGrad, {in[0], in[1], in[2]})};
      }));
  cases.push_back(MemoryCase(group, TargetClass::kNone, "layer_norm_grad as forward ops " + shape,
                             norm_inputs, r, n, 14, [](std::span<const Value> in) {
                               const Value d = in[0] - reduce_mean(in[0], -1, true);
                               const Value rstd = rsqrt(reduce_mean(d * d, -1, true) + 1e-5f);
                               const Value xhat = d * rstd;
                               const Value g = in[2] * in[1];
                               const Value inner = g - reduce_mean(g, -1, true) -
                                                   xhat * reduce_mean(g * xhat, -1, true);
                               return std::vector<Value>{rstd * inner};
                             }));
  cases.push_back(MemoryCase(
      group, TargetClass::kNone, "rms_norm_grad " + shape, norm_inputs, r, n, 8,
      [](std::span<const Value> in) {
        return std::vector<Value>{RowGradOp(OpKind::kRmsNormGrad, {in[0], in[1], in[2]})};
      }));
  CaseSpec lse = MemoryCase(
      group, TargetClass::kNone, "logsumexp " + shape, {{x, -8, 8}}, r, n, 5,
      [](std::span<const Value> in) { return std::vector<Value>{logsumexp(in[0], -1)}; });
  lse.outputs = {{r}};
  lse.bytes = kF * (r * n + r);
  cases.push_back(std::move(lse));
}

// An embedding table's gradient: the rows of 2048 token positions (a batch of 16 x 128)
// scatter-added into a 32000 x 128 table, the scatter_add kernel the gradient of gather
// compiles to. Compulsory traffic: the table written once, the rows and their ids read once
// (`like` only gives the shape). The ids come in as f32 and are cast to i32 in the program.
void AddEmbeddingGradient(std::vector<CaseSpec>& cases) {
  const int64_t vocab = 32000, dim = 128, positions = 2048;
  CaseSpec c;
  c.group = "gradient scatter";
  c.name = absl::StrCat("embedding gradient ", vocab, "x", dim, " <- ", positions);
  c.inputs = {{{vocab, dim}}, {{positions, dim}}, {{positions}, 0.0f, static_cast<float>(vocab)}};
  c.outputs = {{vocab, dim}};
  c.memory_bound = true;
  c.bytes = kF * static_cast<double>(vocab * dim + positions * dim + positions);
  c.flops = static_cast<double>(positions * dim);
  c.trace = [](std::span<const Value> in) {
    ir::Attrs attrs;
    attrs.axis = 0;
    const std::vector<Value> operands = {in[0], in[1], cast(in[2], DType::kI32)};
    return std::vector<Value>{in[0].state()->AddNode(ir::OpKind::kScatterAdd, attrs, operands)};
  };
  cases.push_back(std::move(c));
}

void AddComputeChains(std::vector<CaseSpec>& cases) {
  const char* group = "compute-bound chain (oneDNN: unfused | post-ops)";
  {
    const int64_t m = 512, k = 768, n = 3072;
    CaseSpec c;
    c.group = group;
    c.target = TargetClass::kComputeChain;
    c.name = "linear+bias+gelu " + Mkn(m, k, n);
    c.inputs = {{{m, k}}, {{k, n}}, {{n}}};
    c.outputs = {{m, n}};
    c.flops = 2.0 * m * k * n;
    c.bytes = kF * (m * k + k * n + n + m * n);
    c.quick = true;
    c.constant_inputs = {1, 2};
    c.trace = [](std::span<const Value> v) {
      return std::vector<Value>{pto::gelu(matmul(v[0], v[1]) + v[2])};
    };
    c.baselines[0] = OnednnLinearBiasGelu(m, k, n, false);
    c.baselines[1] = OnednnLinearBiasGelu(m, k, n, true);
    c.baselines[2] = OpenblasLinearBiasGelu(m, k, n);
    cases.push_back(std::move(c));
  }
  {
    const int64_t b = 12, s = 512, d = 64;
    CaseSpec c;
    c.group = group;
    c.target = TargetClass::kComputeChain;
    c.name = absl::StrCat("attention ", b, "x", s, "x", d);
    c.inputs = {{{b, s, d}}, {{b, s, d}}, {{b, s, d}}};
    c.outputs = {{b, s, d}};
    c.flops = 4.0 * b * s * s * d;
    c.bytes = kF * 4 * b * s * d;
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    c.trace = [scale](std::span<const Value> v) {
      return std::vector<Value>{
          matmul(softmax(matmul(v[0], v[1], {.transpose_b = true}) * scale), v[2])};
    };
    c.baselines[0] = OnednnAttention(b, s, d, false);
    c.baselines[1] = OnednnAttention(b, s, d, true);
    c.baselines[2] = OpenblasAttention(b, s, d);
    cases.push_back(std::move(c));
  }
}

void AddBlocks(std::vector<CaseSpec>& cases) {
  const tools::BlockDims dims;
  const std::vector<std::vector<int64_t>> weights = tools::WeightShapes(dims);
  for (int64_t batch : {1, 4, 16}) {
    const int64_t seq = 128, m = dims.model, rows = batch * seq;
    CaseSpec c;
    c.group = "transformer block (tools/pto/transformer_block.h; oneDNN: unfused | post-ops)";
    c.name = absl::StrCat("block b", batch, " s", seq, " d", m);
    c.target = TargetClass::kBlock;
    c.inputs = {{{batch, seq, m}}};
    for (size_t i = 0; i < weights.size(); ++i) {
      const bool norm_weight = i == 0 || i == 6;
      c.inputs.push_back({weights[i], norm_weight ? 0.9f : -0.1f, norm_weight ? 1.1f : 0.1f});
      c.constant_inputs.push_back(static_cast<int>(i) + 1);
    }
    c.outputs = {{batch, seq, m}};
    c.flops = 2.0 * rows * m * (3 * m + m + 2 * dims.ff) + 4.0 * batch * seq * seq * m;
    double bytes = 2.0 * rows * m;
    for (const auto& w : weights) {
      double n = 1;
      for (int64_t d : w) n *= static_cast<double>(d);
      bytes += n;
    }
    c.bytes = kF * bytes;
    c.quick = batch == 4;
    c.report_memory = true;
    c.trace = tools::TransformerBlock(dims);
    const BlockShape shape{batch, seq, dims.model, dims.heads, dims.ff};
    c.baselines[0] = OnednnTransformerBlock(shape, false);
    c.baselines[1] = OnednnTransformerBlock(shape, true);
    c.onnx = {"block", absl::StrCat(R"({"model": )", dims.model, R"(, "heads": )", dims.heads,
                                    R"(, "ff": )", dims.ff, R"(, "eps": 1e-5})")};
    cases.push_back(std::move(c));
  }
}

}  // namespace

std::vector<CaseSpec> AllCases() {
  std::vector<CaseSpec> cases;
  AddMatmuls(cases);
  AddMemoryBound(cases);
  AddBackwardRowOps(cases);
  AddEmbeddingGradient(cases);
  AddComputeChains(cases);
  AddBlocks(cases);
  return cases;
}

}  // namespace pto::bench
