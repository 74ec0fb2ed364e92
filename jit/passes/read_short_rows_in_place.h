// Pass (level 3, after prepack_constant_weights): a matmul whose B is not prepacked and is read
// in the broadcast form with rows of at most 512 bytes (N <= 128 f32) reads it in place
// (pack_b = false): a packed panel of such rows saves nothing its copy costs.
#ifndef PTO_JIT_PASSES_READ_SHORT_ROWS_IN_PLACE_H_
#define PTO_JIT_PASSES_READ_SHORT_ROWS_IN_PLACE_H_

#include "jit/ir/tile_graph.h"

namespace pto::jit {

void ReadShortRowsOfBInPlace(ir::TileGraph& tiles);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_READ_SHORT_ROWS_IN_PLACE_H_
