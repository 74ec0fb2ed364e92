#include "jit/codegen/matmul_scratch.h"

#include <algorithm>
#include <vector>

namespace pto::jit {
namespace {

// The A slab's budget: with B's panel (half the L2 by default) it stays within the L2.
constexpr int64_t kASlabBytes = 256 * 1024;
// Fewer columns reuse a copied block too little to pay for the copy (attention's
// gradients with 32 columns per head read A in place).
constexpr int64_t kSlabMinColumns = 128;
constexpr int64_t kLineFloats = 16;
// The copy moves squares of vectors (at most 16 lanes): the last may run past `rows`.
constexpr int64_t kSquareRows = 16;

}  // namespace

bool MatMulReadsAAcrossK(const ir::Kernel& k) {
  const size_t rank = k.domain.size();
  const std::vector<ir::SymExpr>& a = k.accesses[k.a].strides;
  return !ir::MatMulDotForm(k) && a[rank - 2].AsConstant() == 1 && a[rank].AsConstant() != 1;
}

MatMulASlab MatMulASlabOf(const ir::Kernel& k) {
  MatMulASlab slab;
  const ir::TileConfig& c = k.config;
  if (k.kind != ir::KernelKind::kMatMul || c.kc <= 0 || !ir::MatMulCanBlockK(k)) return slab;
  const ir::SymExpr& n = k.domain[k.domain.size() - 1];
  if (!MatMulReadsAAcrossK(k) || (n.IsConstant() && n.constant() < kSlabMinColumns)) {
    return slab;
  }
  int64_t lines = (c.kc + kLineFloats - 1) / kLineFloats;
  if (lines % 2 == 0) ++lines;
  const int64_t mr = std::max(1, c.mr);
  const int64_t rows = (kASlabBytes / (4 * lines * kLineFloats) - kSquareRows) / mr * mr;
  if (rows < mr) return slab;
  slab.rows = rows;
  slab.row_stride = lines * kLineFloats;
  slab.offset = c.pack_b ? c.panel_bytes / 4 : 0;
  return slab;
}

int64_t MatMulScratchBytes(const ir::Kernel& kernel) {
  const MatMulASlab slab = MatMulASlabOf(kernel);
  const int64_t panel = kernel.config.pack_b ? kernel.config.panel_bytes : 0;
  return slab.rows > 0 ? 4 * (slab.offset + (slab.rows + kSquareRows) * slab.row_stride) : panel;
}

}  // namespace pto::jit
