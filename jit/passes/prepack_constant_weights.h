// Pass (level 3, after choose_tile_configs): a matmul whose B is a constant input (a weight
// declared in FunctionOptions::constant_inputs) and that packs B's panels reads B prepacked
// instead: a kPacked buffer (ir::PackedB) the plan builds once from the constants, so no call
// repacks the panels. B must be a plain K x N view of the input: static K and N, constant
// offset and strides, the same for every batch entry and row.
#ifndef PTO_JIT_PASSES_PREPACK_CONSTANT_WEIGHTS_H_
#define PTO_JIT_PASSES_PREPACK_CONSTANT_WEIGHTS_H_

#include <vector>

#include "jit/ir/tile_graph.h"

namespace pto::jit {

// Whether `call`'s access `access` reads an input declared constant.
bool ReadsConstantInput(const ir::TileGraph& tiles, const ir::KernelCall& call, int access,
                        const std::vector<bool>& constant_inputs);

// `constant_inputs[i]`: input i is constant. `lanes`: the target's f32 lanes (for a config
// with vector_width 0).
void PrepackConstantWeights(ir::TileGraph& tiles, const std::vector<bool>& constant_inputs,
                            int lanes);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_PREPACK_CONSTANT_WEIGHTS_H_
