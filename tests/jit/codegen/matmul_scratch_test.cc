// The scratch layout of matmul kernels: B's panel, then the A slab of an A read across K.
#include "jit/codegen/matmul_scratch.h"

#include <cstdint>
#include <optional>

#include "gtest/gtest.h"
#include "matmul_kernel_builder.h"

namespace pto::jit::testing {
namespace {

ir::Kernel Kernel(bool transpose_a, BLayout layout, int64_t kc, bool pack_b,
                  std::optional<int64_t> static_n = std::nullopt) {
  ir::TileConfig config;
  config.mr = 6;
  config.nr_vectors = 4;
  config.kc = kc;
  config.pack_b = pack_b;
  config.panel_bytes = 524288;
  MatMulOptions o;
  o.transpose_a = transpose_a;
  o.b_layout = layout;
  o.config = config;
  o.static_n = static_n;
  return MatMulKernel(o, "mm");
}

TEST(MatMulScratch, AReadAcrossKGetsASlabOfOddLineRowsAfterBsPanel) {
  // K blocks of 256: rows of 17 lines (272 floats); 256 KiB hold 240 rows, 16 of them spare
  // for the copy's last square, leaving 222 in runs of whole 6-row blocks.
  const ir::Kernel packed = Kernel(true, BLayout::kKN, 256, true);
  const MatMulASlab slab = MatMulASlabOf(packed);
  EXPECT_EQ(slab.rows, 222);
  EXPECT_EQ(slab.row_stride, 272);
  EXPECT_EQ(slab.offset, 524288 / 4);
  EXPECT_EQ(MatMulScratchBytes(packed), 524288 + 4 * (222 + 16) * 272);
  // Without B's panel the slab starts the scratch; K blocks of 512 take 33-line rows.
  const MatMulASlab unpacked = MatMulASlabOf(Kernel(true, BLayout::kKN, 512, false));
  EXPECT_EQ(unpacked.offset, 0);
  EXPECT_EQ(unpacked.row_stride, 33 * 16);
  EXPECT_EQ(unpacked.rows, (262144 / (4 * 33 * 16) - 16) / 6 * 6);
}

TEST(MatMulScratch, NoSlabWithoutKBlocksOrWhenAIsReadAlongK) {
  EXPECT_EQ(MatMulASlabOf(Kernel(true, BLayout::kKN, 0, true)).rows, 0);
  EXPECT_EQ(MatMulASlabOf(Kernel(false, BLayout::kKN, 256, true)).rows, 0);
  // B stored [N, K]: the dot-product form reads A along K in place.
  EXPECT_EQ(MatMulASlabOf(Kernel(true, BLayout::kNK, 256, true)).rows, 0);
  // Fewer than 128 static columns (attention's per-head gradients) read A in place; 128 do not.
  EXPECT_EQ(MatMulASlabOf(Kernel(true, BLayout::kKN, 256, true, 127)).rows, 0);
  EXPECT_EQ(MatMulASlabOf(Kernel(true, BLayout::kKN, 256, true, 128)).rows, 222);
  EXPECT_EQ(MatMulScratchBytes(Kernel(false, BLayout::kKN, 256, true)), 524288);
  EXPECT_EQ(MatMulScratchBytes(Kernel(false, BLayout::kKN, 256, false)), 0);
}

}  // namespace
}  // namespace pto::jit::testing
