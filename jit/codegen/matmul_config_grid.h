// The matmul tile configs codegen supports, as a grid of values per TileConfig field. The
// config sweep walks it: ctest a seeded sample plus the boundary configs
// (tests/jit/codegen/matmul_config_sweep_test.cc), `pto_bench_kernels --sweep` every config.
#ifndef PTO_JIT_CODEGEN_MATMUL_CONFIG_GRID_H_
#define PTO_JIT_CODEGEN_MATMUL_CONFIG_GRID_H_

#include <cstdint>
#include <vector>

#include "jit/ir/tile_ir.h"

namespace pto::jit {

struct MatMulConfigGrid {
  std::vector<int> mr = {1, 2, 4, 6, 8};
  std::vector<int> nr_vectors = {1, 2, 3, 4};
  std::vector<int> unroll = {1, 2, 4, 8};
  std::vector<int64_t> kc = {0, 8, 64, 256};
  // (pack_b, panel_bytes) pairs: no panels, panels without and with packing.
  std::vector<std::pair<bool, int64_t>> packing = {{false, 0}, {false, 65536}, {true, 65536}};
  // (loop_order, mc) pairs.
  std::vector<std::pair<ir::LoopOrder, int64_t>> order = {{ir::LoopOrder::kPanelsOuter, 0},
                                                          {ir::LoopOrder::kRowBlocksOuter, 48}};

  int64_t size() const;
  // The i-th config, 0 <= i < size(); the last field varies fastest. Grain and vector width
  // are left at their defaults (the plan's split and the target's width).
  ir::TileConfig At(int64_t i) const;
};

// The extremes every sweep covers: the smallest micro-tile and one far beyond the register
// file (16 x 4 vectors, 69 registers by ir::MatMulMicroTileRegisters: it spills, and must still
// be right), unroll 1 and the largest codegen accepts (16), K blocks of 8 and none, every loop
// order (with mc below mr and not a multiple of it), packing with panels of one block, and the
// default configs' shapes (AVX2, AVX-512).
std::vector<ir::TileConfig> MatMulBoundaryConfigs();

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_MATMUL_CONFIG_GRID_H_
