// oneDNN baselines (Debian's libdnnl-dev, oneDNN 2.6, OpenMP threading): one factory per kind
// of case. Unfused variants chain one primitive per op through intermediate buffers; fused
// variants use oneDNN's own post-ops (eltwise and binary) where it has them. Primitive
// creation and weight reorders happen in the factory, outside the timing. When the bench was
// built without oneDNN every factory returns Unavailable (baselines_onednn_missing.cc).
#ifndef PTO_TOOLS_BENCH_BASELINES_ONEDNN_H_
#define PTO_TOOLS_BENCH_BASELINES_ONEDNN_H_

#include <cstdint>
#include <string>

#include "tools/bench/bench_case.h"

namespace pto::bench {

// "oneDNN 2.6.x (OpenMP)" or why it is missing.
std::string OnednnDescription();
bool OnednnAvailable();

struct MatmulShape {
  int64_t batch = 1;  // 1: [M,K] x [K,N]; else [batch,M,K] x [batch,K,N]
  int64_t m = 0, k = 0, n = 0;
  // B is a constant weight: oneDNN picks its layout and B is reordered once, untimed.
  bool constant_b = false;
};

// Inputs a, b; output c.
BackendFactory OnednnMatmul(MatmulShape shape);
// Inputs x, w [K,N] (constant, reordered once), bias [N]; output gelu(x w + bias).
BackendFactory OnednnLinearBiasGelu(int64_t m, int64_t k, int64_t n, bool fused);

enum class RowOp { kGelu, kSoftmax, kLayerNorm };
// gelu: input x; softmax: x (last axis); layernorm: x, weight [cols], bias [cols].
BackendFactory OnednnRowOp(RowOp op, int64_t rows, int64_t cols);
// Inputs x [rows,cols], bias [cols], residual [rows,cols]; output gelu(x + bias) + residual.
BackendFactory OnednnBiasGeluResidual(int64_t rows, int64_t cols, bool fused);
// Inputs x, weight, bias, scale [cols], shift [cols]; output layernorm(x) * scale + shift.
BackendFactory OnednnLayerNormScaleShift(int64_t rows, int64_t cols, bool fused);
// Inputs x, mask [rows,cols]; output softmax(x * scale + mask).
BackendFactory OnednnScaledMaskedSoftmax(int64_t rows, int64_t cols, float scale, bool fused);
// Inputs q, k, v [batch,seq,dh]; output softmax(q k^T / sqrt(dh)) v.
BackendFactory OnednnAttention(int64_t batch, int64_t seq, int64_t dh, bool fused);

struct BlockShape {
  int64_t batch = 1, seq = 128, model = 128, heads = 4, ff = 512;
};
// tools/pto/transformer_block.h's block as a chain of primitives. Inputs x [batch,seq,model]
// then the weights in WeightShapes' order; reports its peak intermediate bytes (liveness over
// the chain, each intermediate in a buffer of its own).
BackendFactory OnednnTransformerBlock(BlockShape shape, bool fused);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_BASELINES_ONEDNN_H_
