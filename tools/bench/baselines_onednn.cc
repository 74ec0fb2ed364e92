// oneDNN baselines for matmul, linear+bias+gelu, row ops and the memory-bound chains. The
// attention block and the transformer block are in baselines_onednn_blocks.cc.
#include "tools/bench/baselines_onednn.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "dnnl.hpp"
#include "tools/bench/onednn_chain.h"

namespace pto::bench {

using dnnl::algorithm;
using dnnl::prop_kind;
using Tag = dnnl::memory::format_tag;
constexpr auto kF32 = dnnl::memory::data_type::f32;

std::string OnednnDescription() {
  const dnnl_version_t* v = dnnl_version();
  return absl::StrCat("oneDNN ", v->major, ".", v->minor, ".", v->patch, " (",
                      v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other", " threading)");
}

bool OnednnAvailable() { return true; }

BackendFactory OnednnMatmul(MatmulShape s) {
  return [s](const std::vector<IoSet>& sets, int threads) {
    return GuardOnednn([&] {
      Chain chain(sets, threads);
      const bool batched = s.batch > 1;
      const Dims a = batched ? Dims{s.batch, s.m, s.k} : Dims{s.m, s.k};
      const Dims b = batched ? Dims{s.batch, s.k, s.n} : Dims{s.k, s.n};
      const Dims c = batched ? Dims{s.batch, s.m, s.n} : Dims{s.m, s.n};
      const dnnl::memory::desc b_md =
          s.constant_b ? dnnl::memory::desc(b, kF32, batched ? Tag::abc : Tag::any) : Plain(b);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(Plain(a), b_md, Plain(c)), CpuEngine());
      std::vector<dnnl::memory> weights;
      if (s.constant_b) weights = chain.Reordered(1, Plain(b), pd.weights_desc());
      chain.Add(dnnl::matmul(pd), [&](int i) {
        return Args{{DNNL_ARG_SRC, chain.In(i, 0, Plain(a))},
                    {DNNL_ARG_WEIGHTS, s.constant_b ? weights[i] : chain.In(i, 1, Plain(b))},
                    {DNNL_ARG_DST, chain.Out(i, 0, Plain(c))}};
      });
      return chain.Finish();
    });
  };
}

BackendFactory OnednnLinearBiasGelu(int64_t m, int64_t k, int64_t n, bool fused) {
  return [=](const std::vector<IoSet>& sets, int threads) {
    return GuardOnednn([&] {
      Chain chain(sets, threads);
      const Dims a{m, k}, b{k, n}, c{m, n}, bias{1, n};
      dnnl::primitive_attr attr;
      if (fused) {
        dnnl::post_ops po;
        po.append_eltwise(1.0f, algorithm::eltwise_gelu_erf, 0, 0);
        attr.set_post_ops(po);
      }
      dnnl::matmul::primitive_desc pd(
          dnnl::matmul::desc(Plain(a), dnnl::memory::desc(b, kF32, Tag::any), Plain(bias),
                             Plain(c)),
          attr, CpuEngine());
      std::vector<dnnl::memory> weights = chain.Reordered(1, Plain(b), pd.weights_desc());
      dnnl::memory pre = fused ? dnnl::memory() : chain.Scratch(Plain(c));
      chain.Add(dnnl::matmul(pd), [&](int i) {
        return Args{{DNNL_ARG_SRC, chain.In(i, 0, Plain(a))},
                    {DNNL_ARG_WEIGHTS, weights[i]},
                    {DNNL_ARG_BIAS, chain.In(i, 2, Plain(bias))},
                    {DNNL_ARG_DST, fused ? chain.Out(i, 0, Plain(c)) : pre}};
      });
      if (!fused) {
        dnnl::eltwise_forward::primitive_desc gelu(
            dnnl::eltwise_forward::desc(prop_kind::forward_inference, algorithm::eltwise_gelu_erf,
                                        Plain(c), 0, 0),
            CpuEngine());
        chain.Add(dnnl::eltwise_forward(gelu), [&](int i) {
          return Args{{DNNL_ARG_SRC, pre}, {DNNL_ARG_DST, chain.Out(i, 0, Plain(c))}};
        });
      }
      return chain.Finish();
    });
  };
}

namespace {

dnnl::layer_normalization_forward::primitive_desc LayerNormPd(const Dims& x) {
  return dnnl::layer_normalization_forward::primitive_desc(
      dnnl::layer_normalization_forward::desc(
          prop_kind::forward_inference, Plain(x), 1e-5f,
          dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift),
      CpuEngine());
}

dnnl::binary::primitive_desc BinaryPd(algorithm alg, const Dims& a, const Dims& b,
                                      const dnnl::primitive_attr& attr = {}) {
  return dnnl::binary::primitive_desc(dnnl::binary::desc(alg, Plain(a), Plain(b), Plain(a)), attr,
                                      CpuEngine());
}

dnnl::eltwise_forward::primitive_desc EltwisePd(algorithm alg, const Dims& x, float alpha,
                                                const dnnl::primitive_attr& attr = {}) {
  return dnnl::eltwise_forward::primitive_desc(
      dnnl::eltwise_forward::desc(prop_kind::forward_inference, alg, Plain(x), alpha, 0), attr,
      CpuEngine());
}

dnnl::softmax_forward::primitive_desc SoftmaxPd(const Dims& x) {
  return dnnl::softmax_forward::primitive_desc(
      dnnl::softmax_forward::desc(prop_kind::forward_inference, Plain(x), 1), CpuEngine());
}

dnnl::primitive_attr WithBinaryPostOp(const Dims& src1) {
  dnnl::post_ops po;
  po.append_binary(algorithm::binary_add, Plain(src1));
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  return attr;
}

constexpr int kPostOp0Src1 = DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1;
constexpr int kPostOp1Src1 = DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1;

}  // namespace

BackendFactory OnednnRowOp(RowOp op, int64_t rows, int64_t cols) {
  return [=](const std::vector<IoSet>& sets, int threads) {
    return GuardOnednn([&] {
      Chain chain(sets, threads);
      const Dims x{rows, cols}, v{cols};
      dnnl::primitive primitive;
      if (op == RowOp::kGelu)
        primitive = dnnl::eltwise_forward(EltwisePd(algorithm::eltwise_gelu_erf, x, 0));
      if (op == RowOp::kSoftmax) primitive = dnnl::softmax_forward(SoftmaxPd(x));
      if (op == RowOp::kLayerNorm) primitive = dnnl::layer_normalization_forward(LayerNormPd(x));
      chain.Add(primitive, [&](int i) {
        Args args{{DNNL_ARG_SRC, chain.In(i, 0, Plain(x))},
                  {DNNL_ARG_DST, chain.Out(i, 0, Plain(x))}};
        if (op == RowOp::kLayerNorm) {
          args[DNNL_ARG_SCALE] = chain.In(i, 1, Plain(v));
          args[DNNL_ARG_SHIFT] = chain.In(i, 2, Plain(v));
        }
        return args;
      });
      return chain.Finish();
    });
  };
}

BackendFactory OnednnBiasGeluResidual(int64_t rows, int64_t cols, bool fused) {
  return [=](const std::vector<IoSet>& sets, int threads) {
    return GuardOnednn([&] {
      Chain chain(sets, threads);
      const Dims x{rows, cols}, row{1, cols};
      if (fused) {
        dnnl::post_ops po;
        po.append_eltwise(1.0f, algorithm::eltwise_gelu_erf, 0, 0);
        po.append_binary(algorithm::binary_add, Plain(x));
        dnnl::primitive_attr attr;
        attr.set_post_ops(po);
        chain.Add(dnnl::binary(BinaryPd(algorithm::binary_add, x, row, attr)), [&](int i) {
          return Args{{DNNL_ARG_SRC_0, chain.In(i, 0, Plain(x))},
                      {DNNL_ARG_SRC_1, chain.In(i, 1, Plain(row))},
                      {kPostOp1Src1, chain.In(i, 2, Plain(x))},
                      {DNNL_ARG_DST, chain.Out(i, 0, Plain(x))}};
        });
        return chain.Finish();
      }
      dnnl::memory biased = chain.Scratch(Plain(x)), activated = chain.Scratch(Plain(x));
      chain.Add(dnnl::binary(BinaryPd(algorithm::binary_add, x, row)), [&](int i) {
        return Args{{DNNL_ARG_SRC_0, chain.In(i, 0, Plain(x))},
                    {DNNL_ARG_SRC_1, chain.In(i, 1, Plain(row))},
                    {DNNL_ARG_DST, biased}};
      });
      chain.Add(dnnl::eltwise_forward(EltwisePd(algorithm::eltwise_gelu_erf, x, 0)), [&](int) {
        return Args{{DNNL_ARG_SRC, biased}, {DNNL_ARG_DST, activated}};
      });
      chain.Add(dnnl::binary(BinaryPd(algorithm::binary_add, x, x)), [&](int i) {
        return Args{{DNNL_ARG_SRC_0, activated},
                    {DNNL_ARG_SRC_1, chain.In(i, 2, Plain(x))},
                    {DNNL_ARG_DST, chain.Out(i, 0, Plain(x))}};
      });
      return chain.Finish();
    });
  };
}

BackendFactory OnednnLayerNormScaleShift(int64_t rows, int64_t cols, bool fused) {
  return [=](const std::vector<IoSet>& sets, int threads) {
    return GuardOnednn([&] {
      Chain chain(sets, threads);
      const Dims x{rows, cols}, v{cols}, row{1, cols};
      dnnl::memory normed = chain.Scratch(Plain(x));
      chain.Add(dnnl::layer_normalization_forward(LayerNormPd(x)), [&](int i) {
        return Args{{DNNL_ARG_SRC, chain.In(i, 0, Plain(x))},
                    {DNNL_ARG_SCALE, chain.In(i, 1, Plain(v))},
                    {DNNL_ARG_SHIFT, chain.In(i, 2, Plain(v))},
                    {DNNL_ARG_DST, normed}};
      });
      if (fused) {  // layer normalization has no post-ops in 2.6: mul with an add post-op
        chain.Add(dnnl::binary(BinaryPd(algorithm::binary_mul, x, row, WithBinaryPostOp(row))),
                  [&](int i) {
                    return Args{{DNNL_ARG_SRC_0, normed},
                                {DNNL_ARG_SRC_1, chain.In(i, 3, Plain(row))},
                                {kPostOp0Src1, chain.In(i, 4, Plain(row))},
                                {DNNL_ARG_DST, chain.Out(i, 0, Plain(x))}};
                  });
        return chain.Finish();
      }
      dnnl::memory scaled = chain.Scratch(Plain(x));
      chain.Add(dnnl::binary(BinaryPd(algorithm::binary_mul, x, row)), [&](int i) {
        return Args{{DNNL_ARG_SRC_0, normed},
                    {DNNL_ARG_SRC_1, chain.In(i, 3, Plain(row))},
                    {DNNL_ARG_DST, scaled}};
      });
      chain.Add(dnnl::binary(BinaryPd(algorithm::binary_add, x, row)), [&](int i) {
        return Args{{DNNL_ARG_SRC_0, scaled},
                    {DNNL_ARG_SRC_1, chain.In(i, 4, Plain(row))},
                    {DNNL_ARG_DST, chain.Out(i, 0, Plain(x))}};
      });
      return chain.Finish();
    });
  };
}

BackendFactory OnednnScaledMaskedSoftmax(int64_t rows, int64_t cols, float scale, bool fused) {
  return [=](const std::vector<IoSet>& sets, int threads) {
    return GuardOnednn([&] {
      Chain chain(sets, threads);
      const Dims x{rows, cols};
      dnnl::memory masked = chain.Scratch(Plain(x));
      if (fused) {  // one binary add with the scale as a src0 scale attribute, then softmax
        dnnl::primitive_attr attr;
        attr.set_scales(DNNL_ARG_SRC_0, 0, {scale});
        chain.Add(dnnl::binary(BinaryPd(algorithm::binary_add, x, x, attr)), [&](int i) {
          return Args{{DNNL_ARG_SRC_0, chain.In(i, 0, Plain(x))},
                      {DNNL_ARG_SRC_1, chain.In(i, 1, Plain(x))},
                      {DNNL_ARG_DST, masked}};
        });
      } else {
        dnnl::memory scaled = chain.Scratch(Plain(x));
        chain.Add(dnnl::eltwise_forward(EltwisePd(algorithm::eltwise_linear, x, scale)),
                  [&](int i) {
                    return Args{{DNNL_ARG_SRC, chain.In(i, 0, Plain(x))}, {DNNL_ARG_DST, scaled}};
                  });
        chain.Add(dnnl::binary(BinaryPd(algorithm::binary_add, x, x)), [&](int i) {
          return Args{{DNNL_ARG_SRC_0, scaled},
                      {DNNL_ARG_SRC_1, chain.In(i, 1, Plain(x))},
                      {DNNL_ARG_DST, masked}};
        });
      }
      chain.Add(dnnl::softmax_forward(SoftmaxPd(x)), [&](int i) {
        return Args{{DNNL_ARG_SRC, masked}, {DNNL_ARG_DST, chain.Out(i, 0, Plain(x))}};
      });
      return chain.Finish();
    });
  };
}

}  // namespace pto::bench
