// The demo's program: a small pre-norm transformer block (layernorm, QKV projection,
// multi-head attention, output projection, residual, MLP with GELU, residual).
#ifndef PTO_TOOLS_PTO_TRANSFORMER_BLOCK_H_
#define PTO_TOOLS_PTO_TRANSFORMER_BLOCK_H_

#include <cstdint>
#include <vector>

#include "pto/pto.h"

namespace pto::tools {

struct BlockDims {
  int64_t model = 128;
  int64_t heads = 4;
  int64_t ff = 512;
  // A causal mask on the attention scores (position i attends to positions <= i): the masked
  // scores are set to -1e9 before the softmax.
  bool causal = false;
  // Gradient checkpointing: the attention sublayer and the MLP sublayer are each one segment
  // (pto::checkpoint), recomputed in the backward pass from their inputs.
  bool checkpoint_sublayers = false;
};

// Inputs: x [batch, seq, model], then the weights in WeightShapes' order.
TraceFn TransformerBlock(BlockDims dims);
std::vector<std::vector<int64_t>> WeightShapes(BlockDims dims);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_TRANSFORMER_BLOCK_H_
