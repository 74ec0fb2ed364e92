// The per-thread scratch a matmul kernel uses (kernel ABI; the plan provides it): B's packed
// panel (config.pack_b, panel_bytes), then the A slab of a matmul that reads A across K.
#ifndef PTO_JIT_CODEGEN_MATMUL_SCRATCH_H_
#define PTO_JIT_CODEGEN_MATMUL_SCRATCH_H_

#include <cstdint>

#include "jit/ir/tile_ir.h"

namespace pto::jit {

// A matmul whose A is stored [K, M] (contiguous along M, read across K: a weight gradient's
// xᵀ), with N not a constant below 128 (fewer columns reuse a block too little), and whose
// kernel blocks K copies, for each K block, a run of up to `rows` rows of A into the scratch at
// `offset` floats, in rows of K: row m's K block at (m - first) * row_stride, as a copy to rows of
// [M, K] would lay it out, but a block at a time that stays in the cache. The micro-tiles then read
// A along K instead of touching one line per K step at A's K stride (often a power of two that maps
// a micro-tile's lines onto a few cache sets). row_stride is an odd number of 64-byte lines, so the
// rows spread over the cache sets; the slab has a vector's worth of rows more than `rows` for the
// copy's last square. rows 0: A is read in place.
struct MatMulASlab {
  int64_t rows = 0;
  int64_t row_stride = 0;
  int64_t offset = 0;
};
MatMulASlab MatMulASlabOf(const ir::Kernel& kernel);

// Whether the broadcast-form matmul `kernel` reads A across K: A stored [K, M], contiguous
// along M, so each K step's A elements lie a row of A past the last step's.
bool MatMulReadsAAcrossK(const ir::Kernel& kernel);

// Scratch bytes the matmul `kernel` needs per thread: B's panel and the A slab.
int64_t MatMulScratchBytes(const ir::Kernel& kernel);

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_MATMUL_SCRATCH_H_
