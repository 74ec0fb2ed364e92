// oneDNN baselines for the attention block and the demo's transformer block: chains of
// primitives, unfused (one primitive per op) or with oneDNN's post-ops.
#include <cmath>

#include "dnnl.hpp"
#include "tools/bench/baselines_onednn.h"
#include "tools/bench/onednn_chain.h"

namespace pto::bench {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
using Tag = dnnl::memory::format_tag;
constexpr auto kF32 = dnnl::memory::data_type::f32;
constexpr int kPostOp0Src1 = DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1;

dnnl::primitive_attr Attr(const dnnl::post_ops& po) {
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  return attr;
}

dnnl::softmax_forward SoftmaxLastAxis(const Dims& x) {
  return dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(
      dnnl::softmax_forward::desc(prop_kind::forward_inference, Plain(x),
                                  static_cast<int>(x.size()) - 1),
      CpuEngine()));
}

dnnl::eltwise_forward Eltwise(algorithm alg, const Dims& x, float alpha) {
  return dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(
      dnnl::eltwise_forward::desc(prop_kind::forward_inference, alg, Plain(x), alpha, 0),
      CpuEngine()));
}

dnnl::binary AddSame(const Dims& x) {
  return dnnl::binary(dnnl::binary::primitive_desc(
      dnnl::binary::desc(algorithm::binary_add, Plain(x), Plain(x), Plain(x)), CpuEngine()));
}

// dst = src · W^T + bias for W [out, in] = input `w` and bias = input `w + 1`, with post-ops;
// `extra` adds per-set arguments (post-op operands).
void Linear(Chain& chain, const std::function<dnnl::memory(int)>& src, int w, int64_t rows,
            int64_t in, int64_t out, const dnnl::post_ops& po,
            const std::function<dnnl::memory(int)>& dst,
            const std::function<void(int, Args&)>& extra = nullptr) {
  const dnnl::memory::desc w_have = Strided({in, out}, {1, in});
  dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(Plain({rows, in}), dnnl::memory::desc({in, out}, kF32, Tag::any),
                         Plain({1, out}), Plain({rows, out})),
      Attr(po), CpuEngine());
  std::vector<dnnl::memory> weights = chain.Reordered(w, w_have, pd.weights_desc());
  chain.Add(dnnl::matmul(pd), [&](int i) {
    Args args{{DNNL_ARG_SRC, src(i)},
              {DNNL_ARG_WEIGHTS, weights[i]},
              {DNNL_ARG_BIAS, chain.In(i, w + 1, Plain({1, out}))},
              {DNNL_ARG_DST, dst(i)}};
    if (extra) extra(i, args);
    return args;
  });
}

dnnl::layer_normalization_forward LayerNorm(const Dims& x) {
  return dnnl::layer_normalization_forward(dnnl::layer_normalization_forward::primitive_desc(
      dnnl::layer_normalization_forward::desc(
          prop_kind::forward_inference, Plain(x), 1e-5f,
          dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift),
      CpuEngine()));
}

}  // namespace

BackendFactory OnednnAttention(int64_t batch, int64_t seq, int64_t dh, bool fused) {
  return [=](const std::vector<IoSet>& sets, int threads) {
    return GuardOnednn([&] {
      Chain chain(sets, threads);
      const Dims q{batch, seq, dh}, s{batch, seq, seq};
      const dnnl::memory::desc k_t = Strided({batch, dh, seq}, {seq * dh, 1, dh});
      const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
      dnnl::post_ops po;
      if (fused) po.append_eltwise(1.0f, algorithm::eltwise_linear, scale, 0);
      dnnl::memory scores = chain.Scratch(Plain(s));
      chain.Add(dnnl::matmul(dnnl::matmul::primitive_desc(
                    dnnl::matmul::desc(Plain(q), k_t, Plain(s)), Attr(po), CpuEngine())),
                [&](int i) {
                  return Args{{DNNL_ARG_SRC, chain.In(i, 0, Plain(q))},
                              {DNNL_ARG_WEIGHTS, chain.In(i, 1, k_t)},
                              {DNNL_ARG_DST, scores}};
                });
      dnnl::memory probs = scores;  // fused: softmax in place
      if (!fused) {
        dnnl::memory scaled = chain.Scratch(Plain(s));
        probs = chain.Scratch(Plain(s));
        chain.Add(Eltwise(algorithm::eltwise_linear, s, scale), [&](int) {
          return Args{{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, scaled}};
        });
        chain.Add(SoftmaxLastAxis(s), [&](int) {
          return Args{{DNNL_ARG_SRC, scaled}, {DNNL_ARG_DST, probs}};
        });
      } else {
        chain.Add(SoftmaxLastAxis(s), [&](int) {
          return Args{{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, scores}};
        });
      }
      chain.Add(dnnl::matmul(dnnl::matmul::primitive_desc(
                    dnnl::matmul::desc(Plain(s), Plain(q), Plain(q)), CpuEngine())),
                [&](int i) {
                  return Args{{DNNL_ARG_SRC, probs},
                              {DNNL_ARG_WEIGHTS, chain.In(i, 2, Plain(q))},
                              {DNNL_ARG_DST, chain.Out(i, 0, Plain(q))}};
                });
      return chain.Finish();
    });
  };
}

BackendFactory OnednnTransformerBlock(BlockShape b, bool fused) {
  return [=](const std::vector<IoSet>& sets, int threads) {
    return GuardOnednn([&] {
      Chain chain(sets, threads);
      const int64_t m = b.model, rows = b.batch * b.seq, dh = b.model / b.heads;
      const Dims x{rows, m}, heads{b.batch, b.heads, b.seq, dh};
      const Dims scores_dims{b.batch, b.heads, b.seq, b.seq};
      const dnnl::post_ops none;
      auto scratch = [&](const Dims& d) {
        dnnl::memory mem = chain.Scratch(Plain(d));
        return [mem](int) { return mem; };
      };
      auto input = [&](int index, const Dims& d) {
        return [&chain, index, d](int i) { return chain.In(i, index, Plain(d)); };
      };
      auto residual = [&](const std::function<dnnl::memory(int)>& r) {
        return [r](int i, Args& args) { args[kPostOp0Src1] = r(i); };
      };
      dnnl::post_ops add_post;
      add_post.append_binary(algorithm::binary_add, Plain(x));
      // h1 = layernorm(x); qkv = linear(h1)
      auto h1 = scratch(x);
      chain.Add(LayerNorm(x), [&](int i) {
        return Args{{DNNL_ARG_SRC, chain.In(i, 0, Plain(x))},
                    {DNNL_ARG_SCALE, chain.In(i, 1, Plain({m}))},
                    {DNNL_ARG_SHIFT, chain.In(i, 2, Plain({m}))},
                    {DNNL_ARG_DST, h1(i)}};
      });
      auto qkv = scratch({rows, 3 * m});
      Linear(chain, h1, 3, rows, m, 3 * m, none, qkv);
      // Heads as strided views of qkv: q, v [b,h,s,dh]; k^T [b,h,dh,s].
      const Dims head_strides{b.seq * 3 * m, dh, 3 * m, 1};
      const dnnl::memory::desc q_md = Strided(heads, head_strides);
      const dnnl::memory::desc k_t_md =
          Strided({b.batch, b.heads, dh, b.seq}, {b.seq * 3 * m, dh, 1, 3 * m});
      float* qkv_data = static_cast<float*>(qkv(0).get_data_handle());
      dnnl::memory q_mem(q_md, CpuEngine(), qkv_data), k_mem(k_t_md, CpuEngine(), qkv_data + m),
          v_mem(q_md, CpuEngine(), qkv_data + 2 * m);
      const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
      dnnl::post_ops scale_post;
      if (fused) scale_post.append_eltwise(1.0f, algorithm::eltwise_linear, scale, 0);
      auto scores = scratch(scores_dims);
      chain.Add(
          dnnl::matmul(dnnl::matmul::primitive_desc(
              dnnl::matmul::desc(q_md, k_t_md, Plain(scores_dims)), Attr(scale_post), CpuEngine())),
          [&](int i) {
            return Args{
                {DNNL_ARG_SRC, q_mem}, {DNNL_ARG_WEIGHTS, k_mem}, {DNNL_ARG_DST, scores(i)}};
          });
      std::function<dnnl::memory(int)> probs = scores;
      if (!fused) {
        auto scaled = scratch(scores_dims);
        chain.Add(Eltwise(algorithm::eltwise_linear, scores_dims, scale), [&](int i) {
          return Args{{DNNL_ARG_SRC, scores(i)}, {DNNL_ARG_DST, scaled(i)}};
        });
        probs = scratch(scores_dims);
        chain.Add(SoftmaxLastAxis(scores_dims), [&](int i) {
          return Args{{DNNL_ARG_SRC, scaled(i)}, {DNNL_ARG_DST, probs(i)}};
        });
      } else {
        chain.Add(SoftmaxLastAxis(scores_dims), [&](int i) {
          return Args{{DNNL_ARG_SRC, scores(i)}, {DNNL_ARG_DST, scores(i)}};
        });
      }
      // attention [b,h,s,dh], then merged back to [b,s,h*dh] by a reorder.
      auto attention = scratch(heads);
      chain.Add(dnnl::matmul(dnnl::matmul::primitive_desc(
                    dnnl::matmul::desc(Plain(scores_dims), q_md, Plain(heads)), CpuEngine())),
                [&](int i) {
                  return Args{{DNNL_ARG_SRC, probs(i)},
                              {DNNL_ARG_WEIGHTS, v_mem},
                              {DNNL_ARG_DST, attention(i)}};
                });
      auto merged = scratch(x);
      const dnnl::memory::desc merged_md = Strided(heads, {b.seq * m, dh, m, 1});
      dnnl::memory merged_view(merged_md, CpuEngine(), merged(0).get_data_handle());
      chain.Add(dnnl::reorder(dnnl::reorder::primitive_desc(attention(0), merged_view)),
                [&](int i) {
                  return Args{{DNNL_ARG_FROM, attention(i)}, {DNNL_ARG_TO, merged_view}};
                });
      // x2 = x + linear(merged)
      auto x2 = scratch(x);
      if (fused) {
        Linear(chain, merged, 5, rows, m, m, add_post, x2, residual(input(0, x)));
      } else {
        auto projected = scratch(x);
        Linear(chain, merged, 5, rows, m, m, none, projected);
        chain.Add(AddSame(x), [&](int i) {
          return Args{{DNNL_ARG_SRC_0, projected(i)},
                      {DNNL_ARG_SRC_1, chain.In(i, 0, Plain(x))},
                      {DNNL_ARG_DST, x2(i)}};
        });
      }
      // out = x2 + linear(gelu(linear(layernorm(x2))))
      auto h2 = scratch(x);
      chain.Add(LayerNorm(x), [&](int i) {
        return Args{{DNNL_ARG_SRC, x2(i)},
                    {DNNL_ARG_SCALE, chain.In(i, 7, Plain({m}))},
                    {DNNL_ARG_SHIFT, chain.In(i, 8, Plain({m}))},
                    {DNNL_ARG_DST, h2(i)}};
      });
      const Dims up_dims{rows, b.ff};
      auto up = scratch(up_dims);
      auto out = [&chain, x](int i) { return chain.Out(i, 0, Plain(x)); };
      if (fused) {
        dnnl::post_ops gelu_post;
        gelu_post.append_eltwise(1.0f, algorithm::eltwise_gelu_erf, 0, 0);
        Linear(chain, h2, 9, rows, m, b.ff, gelu_post, up);
        dnnl::post_ops down_post;
        down_post.append_binary(algorithm::binary_add, Plain(x));
        Linear(chain, up, 11, rows, b.ff, m, down_post, out, residual(x2));
      } else {
        auto up_pre = scratch(up_dims);
        Linear(chain, h2, 9, rows, m, b.ff, none, up_pre);
        chain.Add(Eltwise(algorithm::eltwise_gelu_erf, up_dims, 0), [&](int i) {
          return Args{{DNNL_ARG_SRC, up_pre(i)}, {DNNL_ARG_DST, up(i)}};
        });
        auto down = scratch(x);
        Linear(chain, up, 11, rows, b.ff, m, none, down);
        chain.Add(AddSame(x), [&](int i) {
          return Args{{DNNL_ARG_SRC_0, down(i)}, {DNNL_ARG_SRC_1, x2(i)}, {DNNL_ARG_DST, out(i)}};
        });
      }
      return chain.Finish();
    });
  };
}

}  // namespace pto::bench
