// The default tile-config policy: the TileConfig a kernel runs with until the tuner finds a
// better one, decided from the kernel, its place in the tile graph and DeviceInfo (vector width,
// unroll, the matmul micro-tile and its K blocks, prefetch distances, streaming stores, the
// grains of the plan's split). Policy, kept apart from the pass that applies it
// (choose_tile_configs.h), like XNNPACK's per-architecture configs apart from its operators.
// The measurements behind each constant and decision are in docs/default_configs.md.
#ifndef PTO_JIT_PASSES_DEFAULT_TILE_CONFIGS_H_
#define PTO_JIT_PASSES_DEFAULT_TILE_CONFIGS_H_

#include <cstdint>
#include <optional>

#include "device/device_info.h"
#include "jit/ir/tile_ir.h"

namespace pto::jit {

// What the policy knows of a kernel beyond the kernel itself (facts of the tile graph).
struct KernelContext {
  // Matmul: B is a constant input (the plan reads it prepacked).
  bool constant_b = false;
  // Elementwise and row ops with one store: the bytes of the Function output it writes, when
  // that output's size is static; nullopt otherwise.
  std::optional<int64_t> output_bytes;
};

// `kernel.config` with every field the policy decides set for `device`.
ir::TileConfig DefaultTileConfig(const ir::Kernel& kernel, const KernelContext& context,
                                 const device::DeviceInfo& device);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_DEFAULT_TILE_CONFIGS_H_
