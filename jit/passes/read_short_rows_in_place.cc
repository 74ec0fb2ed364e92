#include "jit/passes/read_short_rows_in_place.h"

#include <cstdint>
#include <vector>

namespace pto::jit {
namespace {

// B read in the broadcast form (N stride 1) with rows of at most kInPlaceRowBytes: a packed
// panel saves no cache traffic and its copy is pure cost (measurements:
// docs/default_configs.md).
constexpr int64_t kInPlaceRowBytes = 512;
bool ShortRowsOfB(const ir::Kernel& k) {
  if (k.b < 0) return false;
  const std::vector<ir::SymExpr>& strides = k.accesses[k.b].strides;
  const size_t rank = k.domain.size();
  if (strides.size() != rank + 1) return false;
  const ir::SymExpr& n_stride = strides[rank - 1];
  const ir::SymExpr& k_stride = strides[rank];
  return n_stride.IsConstant() && n_stride.constant() == 1 && k_stride.IsConstant() &&
         k_stride.constant() * 4 <= kInPlaceRowBytes;
}

}  // namespace

void ReadShortRowsOfBInPlace(ir::TileGraph& tiles) {
  for (ir::KernelCall& call : tiles.calls) {
    ir::Kernel& k = call.kernel;
    if (k.kind == ir::KernelKind::kMatMul && k.b_packed < 0 && ShortRowsOfB(k)) {
      k.config.pack_b = false;
      k.config.pack_prefetch_rows = 0;  // it acts while packing
    }
  }
}

}  // namespace pto::jit
