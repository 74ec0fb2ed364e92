#include "tools/pto/transformer_block.h"

#include <cmath>

namespace pto::tools {

std::vector<std::vector<int64_t>> WeightShapes(BlockDims d) {
  return {
      {d.model},               // ln1 weight
      {d.model},               // ln1 bias
      {3 * d.model, d.model},  // qkv weight [out, in]
      {3 * d.model},           // qkv bias
      {d.model, d.model},      // output projection weight
      {d.model},               // output projection bias
      {d.model},               // ln2 weight
      {d.model},               // ln2 bias
      {d.ff, d.model},         // mlp up weight
      {d.ff},                  // mlp up bias
      {d.model, d.ff},         // mlp down weight
      {d.model},               // mlp down bias
  };
}

TraceFn TransformerBlock(BlockDims d) {
  // x + attention(layer_norm(x)): inputs x, ln1 weight and bias, qkv and projection weights.
  auto attention_sublayer = [d](std::span<const Value> in) {
    const Value& x = in[0];
    const int64_t dh = d.model / d.heads;
    Value h = layer_norm(x, in[1], in[2]);
    Value qkv = linear(h, in[3], in[4]);  // [batch, seq, 3*model]
    auto head_split = [&](int64_t part) {
      Value part_cols = slice(qkv, -1, part * d.model, (part + 1) * d.model);
      return transpose(reshape(part_cols, {0, 0, d.heads, dh}), {0, 2, 1, 3});  // [b, h, s, dh]
    };
    Value q = head_split(0), k = head_split(1), v = head_split(2);
    Value scores = matmul(q, k, {.transpose_b = true}) * (1.0f / std::sqrt(static_cast<float>(dh)));
    if (d.causal) scores = where(ge(iota(scores, -2), iota(scores, -1)), scores, constant(-1e9f));
    Value attention = matmul(softmax(scores), v);                                 // [b, h, s, dh]
    Value merged = reshape(transpose(attention, {0, 2, 1, 3}), {0, 0, d.model});  // [b, s, model]
    return std::vector<Value>{x + linear(merged, in[5], in[6])};
  };
  // x2 + mlp(layer_norm(x2)): inputs x2, ln2 weight and bias, up and down weights.
  auto mlp_sublayer = [](std::span<const Value> in) {
    Value up = gelu(linear(layer_norm(in[0], in[1], in[2]), in[3], in[4]));
    return std::vector<Value>{in[0] + linear(up, in[5], in[6])};
  };
  return [d, attention_sublayer, mlp_sublayer](std::span<const Value> in) {
    std::vector<Value> first(in.begin(), in.begin() + 7);
    const Value x2 = d.checkpoint_sublayers ? checkpoint(attention_sublayer, first)[0]
                                            : attention_sublayer(first)[0];
    std::vector<Value> second = {x2};
    second.insert(second.end(), in.begin() + 7, in.begin() + 13);
    return d.checkpoint_sublayers ? checkpoint(mlp_sublayer, second) : mlp_sublayer(second);
  };
}

}  // namespace pto::tools
