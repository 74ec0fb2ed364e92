#include "jit/kernel_symbol.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace pto::jit {

std::string KernelTileShape(const ir::Kernel& kernel, int target_lanes) {
  const ir::TileConfig& c = kernel.config;
  const int lanes = std::max(1, target_lanes);
  if (kernel.kind == ir::KernelKind::kMatMul) {
    return absl::StrCat(c.mr, "x", ir::MatMulColumnBlock(c, lanes));
  }
  return absl::StrCat("u", c.unroll, "x", c.vector_width > 0 ? c.vector_width : lanes);
}

std::string KernelSymbol(const ir::Kernel& kernel, device::Isa isa, int target_lanes, uint64_t hash,
                         bool checked) {
  return absl::StrCat(kernel.name.empty() ? "f32_kernel" : kernel.name, "_",
                      KernelTileShape(kernel, target_lanes), "_", device::IsaName(isa), "_",
                      absl::Hex(hash, absl::kZeroPad16), checked ? "_checked" : "");
}

}  // namespace pto::jit
