#include "jit/passes/schedule_blocks.h"

namespace pto::jit {

namespace {
// Columns per parallel task of elementwise and reduce kernels: a multiple of every vector width,
// large enough that a task's work dwarfs its launch (~0.4 us here).
constexpr int64_t kColumnGrain = 1 << 14;
}  // namespace

void ScheduleBlocks(ir::TileGraph& tiles, const device::DeviceInfo& device) {
  const int lanes = device.f32_lanes();
  for (ir::KernelCall& call : tiles.calls) {
    ir::Kernel& k = call.kernel;
    ir::TileConfig& c = k.config;
    c.vector_width = lanes;
    switch (k.kind) {
      case ir::KernelKind::kElementwise:
        c.unroll = 4;
        c.tile_rows = 1;
        c.tile_cols = kColumnGrain;  // so that one long row still splits across threads
        call.work_per_cell = 1;
        break;
      case ir::KernelKind::kReduce:
        c.unroll = 2;
        c.tile_rows = 1;
        c.tile_cols = kColumnGrain;
        call.work_per_cell = k.domain.empty() ? ir::SymExpr(1) : k.domain[k.axis];
        break;
      case ir::KernelKind::kRowOp:
        c.unroll = 4;
        c.tile_rows = 1;
        c.tile_cols = 0;
        call.work_per_cell = k.domain.empty() ? ir::SymExpr(1) : k.domain.back();
        break;
      case ir::KernelKind::kMatMul:
        // mr rows x nr vectors of accumulators, leaving registers for B and the A broadcast.
        c.nr_vectors = 2;
        c.mr = 6;
        c.panel_bytes = device.l2_bytes / 2;  // B's panel and A's rows share the L2
        c.pack_b = true;
        c.kc = 256;
        c.tile_rows = c.mr * 4;
        c.tile_cols = int64_t{c.nr_vectors} * lanes * 4;
        call.work_per_cell = ir::SymExpr(2) * k.k;
        break;
    }
  }
}

}  // namespace pto::jit
