// ChooseTileConfigs (jit/passes/choose_tile_configs.h) alone: the mechanics of the block schedule it
// gives every kernel, whatever numbers the default-config policy picks (those are tested with
// the policy): the target's vector width; grains that split a kernel's grid into whole vectors
// and whole micro-tiles, and into a task per core where the grid is large; a matmul micro-tile
// whose accumulators, B vectors and A broadcast fit the register file; the work per grid cell
// (1 elementwise, the reduced extent, the row length, 2K flops per matmul output); a config
// that depends on the kernel and device only, not on what it held before.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "device/device_info.h"
#include "gtest/gtest.h"
#include "jit/passes/choose_tile_configs.h"
#include "tests/jit/codegen/kernel_builders.h"
#include "tests/jit/e2e/test_util.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using ir::SymExpr;
using testing::Elementwise;
using testing::MatMul;
using testing::MatMulDims;
using testing::TileGraphBuilder;

std::vector<device::DeviceInfo> Devices() {
  const device::DeviceInfo avx512 = pto::testing::Avx512Device();
  device::DeviceInfo four_cores = avx512;
  four_cores.cores = 4;
  return {avx512, device::RestrictIsa(avx512, device::Isa::kAvx2), four_cores};
}

std::string Name(const device::DeviceInfo& d) {
  return absl::StrCat(device::IsaName(d.isa), " x", d.cores);
}

// The call of `kernel` (reading inputs 0 and 1, writing output 0) after the pass.
ir::KernelCall Scheduled(ir::Kernel kernel, const device::DeviceInfo& device,
                         std::vector<bool> constant_inputs = {}, int64_t output_elements = 1) {
  TileGraphBuilder t({{"n", 1, 4096}, {"s1"}, {"s2"}});
  std::vector<int> buffers;
  for (int s = 0; s + 1 < kernel.num_buffers; ++s) buffers.push_back(t.Input(s, 1));
  buffers.push_back(t.Output(0, output_elements));
  t.Call(std::move(kernel), buffers);
  ChooseTileConfigs(t.graph(), device, constant_inputs);
  return t.graph().calls[0];
}

// Tasks a grid of these extents splits into at the kernel's grains.
int64_t Tasks(const ir::TileConfig& c, int64_t rows, int64_t cols) {
  const int64_t row_tasks = (rows + c.tile_rows - 1) / c.tile_rows;
  const int64_t col_tasks = c.tile_cols > 0 ? (cols + c.tile_cols - 1) / c.tile_cols : 1;
  return row_tasks * col_tasks;
}

TEST(ChooseTileConfigsTest, ElementwiseGrainsAreWholeVectorsAlongTheRow) {
  for (const device::DeviceInfo& d : Devices()) {
    SCOPED_TRACE(Name(d));
    const ir::KernelCall call = Scheduled(Elementwise({512, 4096}, ir::ExprOp::kAdd), d);
    const ir::TileConfig& c = call.kernel.config;
    EXPECT_EQ(c.vector_width, d.f32_lanes());
    EXPECT_EQ(c.tile_rows, 1);
    ASSERT_GT(c.tile_cols, 0);
    EXPECT_EQ(c.tile_cols % d.f32_lanes(), 0);
    EXPECT_GE(c.unroll, 1);
    EXPECT_EQ(call.work_per_cell, SymExpr(1));
    EXPECT_GE(Tasks(c, 512, 4096), d.cores);
    // One long row still splits across the cores.
    const ir::KernelCall row = Scheduled(Elementwise({1, 1 << 22}, ir::ExprOp::kExp), d);
    EXPECT_GE(Tasks(row.kernel.config, 1, 1 << 22), d.cores);
  }
}

TEST(ChooseTileConfigsTest, ReductionWorkIsTheReducedExtent) {
  for (const device::DeviceInfo& d : Devices()) {
    SCOPED_TRACE(Name(d));
    for (int axis : {0, 1, 2}) {
      const ir::KernelCall call =
          Scheduled(testing::ReduceKernel(axis, ir::ReduceKind::kSum, 1, "sum"), d);
      EXPECT_EQ(call.work_per_cell, SymExpr::Symbol(axis)) << axis;
      const ir::TileConfig& c = call.kernel.config;
      EXPECT_EQ(c.vector_width, d.f32_lanes());
      EXPECT_EQ(c.tile_rows, 1);
      EXPECT_EQ(c.tile_cols % d.f32_lanes(), 0);
    }
  }
}

TEST(ChooseTileConfigsTest, RowOpsSplitByWholeRows) {
  for (const device::DeviceInfo& d : Devices()) {
    SCOPED_TRACE(Name(d));
    const ir::KernelCall call =
        Scheduled(testing::RowKernel(ir::RowOpKind::kSoftmax, 1, "softmax"), d);
    const ir::TileConfig& c = call.kernel.config;
    EXPECT_EQ(c.vector_width, d.f32_lanes());
    EXPECT_EQ(c.tile_rows, 1);
    EXPECT_EQ(c.tile_cols, 0);  // the grid has one column: the whole row
    EXPECT_EQ(call.work_per_cell, SymExpr::Symbol(2));
  }
}

// Matmuls of every kind of shape the schedule tells apart: few or many rows (static or
// symbolic), few or many columns, batched with a B per entry or one shared.
std::vector<MatMulDims> MatMuls() {
  const SymExpr n = SymExpr::Symbol(0);
  std::vector<MatMulDims> dims;
  for (int64_t m : {1, 8, 16, 24, 40, 96, 512, 1024, 4096}) {
    for (int64_t cols : {16, 64, 128, 768, 4096}) {
      dims.push_back({.m = m, .n = cols, .k = 256});
    }
  }
  dims.push_back({.m = n, .n = 768, .k = 768});
  dims.push_back({.m = n, .n = 64, .k = 64});
  dims.push_back({.m = 128, .n = n, .k = 64});
  dims.push_back({.m = 128, .n = 64, .k = 64, .batch = 12});
  dims.push_back({.m = 128, .n = 768, .k = 768, .batch = 4, .b_shared = true});
  dims.push_back({.m = 256, .n = 256, .k = 256, .b_transposed = true});
  return dims;
}

std::string Describe(const MatMulDims& m, const ir::TileConfig& c) {
  return absl::StrCat("M ", m.m.ToString(), " N ", m.n.ToString(), " K ", m.k.ToString(), " batch ",
                      m.batch.ToString(), ": mr ", c.mr, " nr ", c.nr_vectors, " tile ",
                      c.tile_rows, "x", c.tile_cols);
}

TEST(ChooseTileConfigsTest, MatMulMicroTilesFitTheRegisterFile) {
  for (const device::DeviceInfo& d : Devices()) {
    SCOPED_TRACE(Name(d));
    for (const MatMulDims& m : MatMuls()) {
      for (bool constant_b : {false, true}) {
        const ir::KernelCall call = Scheduled(MatMul(m), d, {false, constant_b});
        const ir::TileConfig& c = call.kernel.config;
        SCOPED_TRACE(Describe(m, c));
        EXPECT_EQ(c.vector_width, d.f32_lanes());
        ASSERT_GE(c.mr, 1);
        ASSERT_GE(c.nr_vectors, 1);
        // Accumulators, a row of B vectors and the broadcast of A.
        EXPECT_LE(c.mr * c.nr_vectors + c.nr_vectors + 1, d.vector_registers);
        EXPECT_EQ(call.work_per_cell, SymExpr(2) * m.k);
        EXPECT_GT(c.panel_bytes, 0);
        EXPECT_LE(c.panel_bytes, d.l2_bytes);
        EXPECT_GE(c.kc, 0);
      }
    }
  }
}

TEST(ChooseTileConfigsTest, MatMulGrainsAreWholeMicroTiles) {
  for (const device::DeviceInfo& d : Devices()) {
    SCOPED_TRACE(Name(d));
    for (const MatMulDims& m : MatMuls()) {
      const ir::KernelCall call = Scheduled(MatMul(m), d, {false, true});
      const ir::TileConfig& c = call.kernel.config;
      SCOPED_TRACE(Describe(m, c));
      const std::array<SymExpr, 2> grid = ir::KernelGrid(call.kernel);
      ASSERT_GT(c.tile_rows, 0);
      // Column grains of whole micro-tiles, or the whole of N.
      const int64_t columns = int64_t{c.nr_vectors} * d.f32_lanes();
      ASSERT_GT(c.tile_cols, 0);
      if (!(grid[1].IsConstant() && c.tile_cols == grid[1].constant())) {
        EXPECT_EQ(c.tile_cols % columns, 0);
      }
      // Row grains of whole micro-tiles, or all the rows.
      if (!(grid[0].IsConstant() && c.tile_rows >= grid[0].constant())) {
        EXPECT_EQ(c.tile_rows % c.mr, 0);
      }
    }
  }
}

TEST(ChooseTileConfigsTest, LargeMatMulsGiveEveryCoreATask) {
  for (const device::DeviceInfo& d : Devices()) {
    SCOPED_TRACE(Name(d));
    for (int64_t m : {96, 512, 1024, 4096}) {
      for (int64_t n : {128, 768, 4096}) {
        for (bool constant_b : {false, true}) {
          const MatMulDims dims{.m = m, .n = n, .k = 512};
          const ir::KernelCall call = Scheduled(MatMul(dims), d, {false, constant_b});
          SCOPED_TRACE(Describe(dims, call.kernel.config));
          EXPECT_GE(Tasks(call.kernel.config, m, n), d.cores);
        }
      }
    }
  }
}

TEST(ChooseTileConfigsTest, ConfigDependsOnTheKernelAndDeviceOnly) {
  const device::DeviceInfo d = pto::testing::Avx512Device();
  for (const MatMulDims& m :
       {MatMulDims{.m = 8, .n = 768, .k = 768}, MatMulDims{.m = 1024, .n = 1024, .k = 1024}}) {
    ir::Kernel stale = MatMul(m);
    stale.config.mr = 1;
    stale.config.nr_vectors = 7;
    stale.config.tile_rows = 999;
    stale.config.tile_cols = 3;
    stale.config.pack_b = false;
    stale.config.kc = 5;
    const ir::KernelCall fresh = Scheduled(MatMul(m), d);
    const ir::KernelCall again = Scheduled(stale, d);
    EXPECT_EQ(again.kernel.config, fresh.kernel.config) << Describe(m, fresh.kernel.config);
    EXPECT_EQ(again.work_per_cell, fresh.work_per_cell);
  }
  ir::Kernel stale = Elementwise({64, 64}, ir::ExprOp::kExp);
  stale.config.tile_rows = 7;
  stale.config.vector_width = 3;
  EXPECT_EQ(Scheduled(stale, d).kernel.config,
            Scheduled(Elementwise({64, 64}, ir::ExprOp::kExp), d).kernel.config);
}

TEST(ChooseTileConfigsTest, StreamingStoresOnlyForOutputsNoCacheHolds) {
  const device::DeviceInfo d = pto::testing::Avx512Device();
  // Far larger than every cache here, and a few elements.
  const int64_t huge = int64_t{1} << 30, small = 4096;
  EXPECT_TRUE(Scheduled(Elementwise({huge >> 12, 4096}, ir::ExprOp::kAdd), d, {}, huge)
                  .kernel.config.streaming_stores);
  EXPECT_FALSE(Scheduled(Elementwise({1, small}, ir::ExprOp::kAdd), d, {}, small)
                   .kernel.config.streaming_stores);
  // A temp of that size stays in the caches' way: something reads it soon.
  TileGraphBuilder t;
  const int x = t.Input(0, huge), y = t.Input(1, huge), tmp = t.Temp(huge);
  t.Call(Elementwise({huge >> 12, 4096}, ir::ExprOp::kAdd), {x, y, tmp});
  ChooseTileConfigs(t.graph(), d, {});
  EXPECT_FALSE(t.graph().calls[0].kernel.config.streaming_stores);
}

TEST(ChooseTileConfigsTest, EmptyGraphIsANoOp) {
  ir::TileGraph tiles;
  ChooseTileConfigs(tiles, pto::testing::Avx512Device(), {});
  EXPECT_TRUE(tiles.calls.empty());
  EXPECT_TRUE(tiles.buffers.empty());
}

}  // namespace
}  // namespace pto::jit
