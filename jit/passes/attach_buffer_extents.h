// Pass (level 4): gives every kernel the size of each of its buffer slots
// (ir::Kernel::buffer_extents), from the tile graph's buffers, for checked kernels' bounds
// checks. Runs after the passes that add or rebind slots (prepacking).
#ifndef PTO_JIT_PASSES_ATTACH_BUFFER_EXTENTS_H_
#define PTO_JIT_PASSES_ATTACH_BUFFER_EXTENTS_H_

#include "jit/ir/tile_graph.h"

namespace pto::jit {

void AttachBufferExtents(ir::TileGraph& tiles);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_ATTACH_BUFFER_EXTENTS_H_
