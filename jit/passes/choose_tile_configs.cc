#include "jit/passes/choose_tile_configs.h"

#include <optional>

#include "jit/passes/default_tile_configs.h"
#include "jit/passes/prepack_constant_weights.h"

namespace pto::jit {

namespace {

// The bytes of the Function output that `call`'s one store writes, when its size is static.
std::optional<int64_t> OutputBytes(const ir::TileGraph& tiles, const ir::KernelCall& call) {
  const ir::Kernel& k = call.kernel;
  if (k.stores.size() != 1) return std::nullopt;
  const int slot = k.accesses[k.stores[0].access].buffer;
  const ir::Buffer& out = tiles.buffers[call.buffers[slot]];
  if (out.kind != ir::BufferKind::kOutput || !out.elements.IsConstant()) return std::nullopt;
  return out.elements.constant() * 4;
}

// Work per grid cell: what one cell of the kernel's grid costs, in elements or FMAs.
ir::SymExpr WorkPerCell(const ir::Kernel& k) {
  switch (k.kind) {
    case ir::KernelKind::kElementwise:
      return ir::SymExpr(1);
    case ir::KernelKind::kReduce:
      return k.domain.empty() ? ir::SymExpr(1) : k.domain[k.axis];
    case ir::KernelKind::kRowOp:
      return k.domain.empty() ? ir::SymExpr(1) : k.domain.back();
    case ir::KernelKind::kMatMul:
      return ir::SymExpr(2) * k.k;
    case ir::KernelKind::kScatterAdd:
      // A cell is zeroed; the adds (M / N per cell on average) and the index scans are not
      // counted.
      return ir::SymExpr(1);
  }
  return ir::SymExpr(1);
}

}  // namespace

void ChooseTileConfigs(ir::TileGraph& tiles, const device::DeviceInfo& device,
                       const std::vector<bool>& constant_inputs) {
  for (ir::KernelCall& call : tiles.calls) {
    ir::Kernel& k = call.kernel;
    KernelContext context;
    if (k.kind == ir::KernelKind::kMatMul) {
      context.constant_b = ReadsConstantInput(tiles, call, k.b, constant_inputs);
    } else if (k.kind == ir::KernelKind::kElementwise || k.kind == ir::KernelKind::kRowOp ||
               k.kind == ir::KernelKind::kScatterAdd) {
      context.output_bytes = OutputBytes(tiles, call);
    }
    k.config = DefaultTileConfig(k, context, device);
    call.work_per_cell = WorkPerCell(k);
  }
}

}  // namespace pto::jit
