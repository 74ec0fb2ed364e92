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

// The memory an argument uses in set s.
using MemoryOf = std::function<dnnl::memory(int s)>;

// The demo's transformer block as a chain of primitives, a step per method. Chain orders the
// primitives and measures the buffers' lifetimes by the order of the calls: the steps are
// called in the block's order.
class BlockChain {
 public:
  BlockChain(Chain& chain, BlockShape b, bool fused)
      : chain_(chain),
        b_(b),
        fused_(fused),
        m_(b.model),
        rows_(b.batch * b.seq),
        dh_(b.model / b.heads),
        x_{rows_, m_},
        heads_{b.batch, b.heads, b.seq, dh_},
        scores_dims_{b.batch, b.heads, b.seq, b.seq} {}

  // The block's input x [rows, model].
  MemoryOf X() { return Input(0, x_); }
  // layernorm(src), scaled and shifted by inputs `scale_input` and `scale_input + 1`.
  MemoryOf LayerNormOf(const MemoryOf& src, int scale_input);
  // qkv = linear(h) [rows, 3 * model].
  MemoryOf Qkv(const MemoryOf& h);
  // softmax(q k^T * scale) v for every head of qkv, merged back to [rows, model].
  MemoryOf Attention(const MemoryOf& qkv);
  // x2 = x + linear(merged).
  MemoryOf AttentionResidual(const MemoryOf& merged);
  // out = x2 + linear(gelu(linear(h2))).
  void MlpResidual(const MemoryOf& h2, const MemoryOf& x2);

 private:
  MemoryOf Scratch(const Dims& d) {
    dnnl::memory mem = chain_.Scratch(Plain(d));
    return [mem](int) { return mem; };
  }
  MemoryOf Input(int index, const Dims& d) {
    return [&chain = chain_, index, d](int i) { return chain.In(i, index, Plain(d)); };
  }
  // Makes `r` the source of a binary post-op (a residual add fused into a linear).
  static std::function<void(int, Args&)> PostOpSource(const MemoryOf& r) {
    return [r](int i, Args& args) { args[kPostOp0Src1] = r(i); };
  }
  // softmax(scores * scale); the scale is already applied (a post-op) when fused.
  MemoryOf Probabilities(const MemoryOf& scores, float scale);

  Chain& chain_;
  const BlockShape b_;
  const bool fused_;
  const int64_t m_, rows_, dh_;
  const Dims x_, heads_, scores_dims_;
  const dnnl::post_ops none_;
};

MemoryOf BlockChain::LayerNormOf(const MemoryOf& src, int scale_input) {
  MemoryOf h = Scratch(x_);
  chain_.Add(LayerNorm(x_), [&](int i) {
    return Args{{DNNL_ARG_SRC, src(i)},
                {DNNL_ARG_SCALE, chain_.In(i, scale_input, Plain({m_}))},
                {DNNL_ARG_SHIFT, chain_.In(i, scale_input + 1, Plain({m_}))},
                {DNNL_ARG_DST, h(i)}};
  });
  return h;
}

MemoryOf BlockChain::Qkv(const MemoryOf& h) {
  MemoryOf qkv = Scratch({rows_, 3 * m_});
  Linear(chain_, h, 3, rows_, m_, 3 * m_, none_, qkv);
  return qkv;
}

MemoryOf BlockChain::Attention(const MemoryOf& qkv) {
  // Heads as strided views of qkv: q, v [b,h,s,dh]; k^T [b,h,dh,s].
  const Dims head_strides{b_.seq * 3 * m_, dh_, 3 * m_, 1};
  const dnnl::memory::desc q_md = Strided(heads_, head_strides);
  const dnnl::memory::desc k_t_md =
      Strided({b_.batch, b_.heads, dh_, b_.seq}, {b_.seq * 3 * m_, dh_, 1, 3 * m_});
  float* qkv_data = static_cast<float*>(qkv(0).get_data_handle());
  dnnl::memory q_mem(q_md, CpuEngine(), qkv_data), k_mem(k_t_md, CpuEngine(), qkv_data + m_),
      v_mem(q_md, CpuEngine(), qkv_data + 2 * m_);
  const float scale = 1.0f / std::sqrt(static_cast<float>(dh_));
  dnnl::post_ops scale_post;
  if (fused_) scale_post.append_eltwise(1.0f, algorithm::eltwise_linear, scale, 0);
  MemoryOf scores = Scratch(scores_dims_);
  chain_.Add(
      dnnl::matmul(dnnl::matmul::primitive_desc(
          dnnl::matmul::desc(q_md, k_t_md, Plain(scores_dims_)), Attr(scale_post), CpuEngine())),
      [&](int i) {
        return Args{{DNNL_ARG_SRC, q_mem}, {DNNL_ARG_WEIGHTS, k_mem}, {DNNL_ARG_DST, scores(i)}};
      });
  const MemoryOf probs = Probabilities(scores, scale);
  // attention [b,h,s,dh], then merged back to [b,s,h*dh] by a reorder.
  MemoryOf attention = Scratch(heads_);
  chain_.Add(dnnl::matmul(dnnl::matmul::primitive_desc(
                 dnnl::matmul::desc(Plain(scores_dims_), q_md, Plain(heads_)), CpuEngine())),
             [&](int i) {
               return Args{{DNNL_ARG_SRC, probs(i)},
                           {DNNL_ARG_WEIGHTS, v_mem},
                           {DNNL_ARG_DST, attention(i)}};
             });
  MemoryOf merged = Scratch(x_);
  const dnnl::memory::desc merged_md = Strided(heads_, {b_.seq * m_, dh_, m_, 1});
  dnnl::memory merged_view(merged_md, CpuEngine(), merged(0).get_data_handle());
  chain_.Add(dnnl::reorder(dnnl::reorder::primitive_desc(attention(0), merged_view)), [&](int i) {
    return Args{{DNNL_ARG_FROM, attention(i)}, {DNNL_ARG_TO, merged_view}};
  });
  return merged;
}

MemoryOf BlockChain::Probabilities(const MemoryOf& scores, float scale) {
  if (fused_) {
    chain_.Add(SoftmaxLastAxis(scores_dims_), [&](int i) {
      return Args{{DNNL_ARG_SRC, scores(i)}, {DNNL_ARG_DST, scores(i)}};
    });
    return scores;
  }
  MemoryOf scaled = Scratch(scores_dims_);
  chain_.Add(Eltwise(algorithm::eltwise_linear, scores_dims_, scale), [&](int i) {
    return Args{{DNNL_ARG_SRC, scores(i)}, {DNNL_ARG_DST, scaled(i)}};
  });
  MemoryOf probs = Scratch(scores_dims_);
  chain_.Add(SoftmaxLastAxis(scores_dims_), [&](int i) {
    return Args{{DNNL_ARG_SRC, scaled(i)}, {DNNL_ARG_DST, probs(i)}};
  });
  return probs;
}

MemoryOf BlockChain::AttentionResidual(const MemoryOf& merged) {
  MemoryOf x2 = Scratch(x_);
  if (fused_) {
    dnnl::post_ops add_post;
    add_post.append_binary(algorithm::binary_add, Plain(x_));
    Linear(chain_, merged, 5, rows_, m_, m_, add_post, x2, PostOpSource(X()));
    return x2;
  }
  MemoryOf projected = Scratch(x_);
  Linear(chain_, merged, 5, rows_, m_, m_, none_, projected);
  chain_.Add(AddSame(x_), [&](int i) {
    return Args{{DNNL_ARG_SRC_0, projected(i)},
                {DNNL_ARG_SRC_1, chain_.In(i, 0, Plain(x_))},
                {DNNL_ARG_DST, x2(i)}};
  });
  return x2;
}

void BlockChain::MlpResidual(const MemoryOf& h2, const MemoryOf& x2) {
  const Dims up_dims{rows_, b_.ff};
  MemoryOf up = Scratch(up_dims);
  const MemoryOf out = [&chain = chain_, x = x_](int i) { return chain.Out(i, 0, Plain(x)); };
  if (fused_) {
    dnnl::post_ops gelu_post;
    gelu_post.append_eltwise(1.0f, algorithm::eltwise_gelu_erf, 0, 0);
    Linear(chain_, h2, 9, rows_, m_, b_.ff, gelu_post, up);
    dnnl::post_ops down_post;
    down_post.append_binary(algorithm::binary_add, Plain(x_));
    Linear(chain_, up, 11, rows_, b_.ff, m_, down_post, out, PostOpSource(x2));
    return;
  }
  MemoryOf up_pre = Scratch(up_dims);
  Linear(chain_, h2, 9, rows_, m_, b_.ff, none_, up_pre);
  chain_.Add(Eltwise(algorithm::eltwise_gelu_erf, up_dims, 0), [&](int i) {
    return Args{{DNNL_ARG_SRC, up_pre(i)}, {DNNL_ARG_DST, up(i)}};
  });
  MemoryOf down = Scratch(x_);
  Linear(chain_, up, 11, rows_, b_.ff, m_, none_, down);
  chain_.Add(AddSame(x_), [&](int i) {
    return Args{{DNNL_ARG_SRC_0, down(i)}, {DNNL_ARG_SRC_1, x2(i)}, {DNNL_ARG_DST, out(i)}};
  });
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
      BlockChain block(chain, b, fused);
      const MemoryOf qkv = block.Qkv(block.LayerNormOf(block.X(), 1));
      const MemoryOf x2 = block.AttentionResidual(block.Attention(qkv));
      block.MlpResidual(block.LayerNormOf(x2, 7), x2);
      return chain.Finish();
    });
  };
}

}  // namespace pto::bench
