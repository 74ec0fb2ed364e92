// The matmul config sweep: a seeded sample of the config grid
// (jit/codegen/matmul_config_grid.h) plus its boundary configs, each compiled for the host and
// checked against the double-precision reference on random shapes: both B layouts, transposed
// A, batch-shared B, with and without the epilogue, whole and split tile ranges, with the
// scratch the plan gives and without it. `pto_bench_kernels --sweep` runs every config.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "jit/codegen/emit_kernel.h"
#include "jit/codegen/matmul_config_grid.h"
#include "kernel_test_util.h"
#include "matmul_kernel_builder.h"

namespace pto::jit::testing {
namespace {

constexpr uint32_t kSeed = 20261130;
constexpr int kSampleSize = 24;

std::string ConfigName(const ir::TileConfig& c) {
  return absl::StrCat("mr", c.mr, "_nr", c.nr_vectors, "_u", c.unroll, "_kc", c.kc, "_p", c.pack_b,
                      "_", c.panel_bytes, "_", ir::LoopOrderName(c.loop_order), "_mc", c.mc);
}

// Compiles `config` for one B layout and checks it on three random shapes, each whole and
// split, with and without scratch.
void CheckConfig(const ir::TileConfig& config, BLayout layout, std::mt19937& rng) {
  std::uniform_int_distribution<int> coin(0, 1);
  MatMulOptions o;
  o.config = config;
  o.b_layout = layout;
  o.transpose_a = coin(rng) == 1;
  o.broadcast_b = coin(rng) == 1;
  o.epilogue = coin(rng) == 1;
  const std::string name =
      absl::StrCat("sweep_", ConfigName(config), layout == BLayout::kNK ? "_nk" : "_kn",
                   o.transpose_a ? "_ta" : "", o.broadcast_b ? "_bb" : "", o.epilogue ? "_e" : "");
  const ir::Kernel kernel = MatMulKernel(o, name);
  absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(HostTarget().isa), kernel);
  ASSERT_TRUE(c.ok()) << name << ": " << c.status();
  std::uniform_int_distribution<int64_t> m(1, 40), n(1, 70), k(0, 300), tile(1, 24);
  const std::vector<MatMulCase> shapes = {
      {1, m(rng), n(rng), k(rng)}, {2, m(rng), n(rng), k(rng)}, {1, 1, n(rng), k(rng)}};
  for (MatMulCase s : shapes) {
    s.transpose_a = o.transpose_a;
    s.broadcast_b = o.broadcast_b;
    s.b_layout = layout;
    const int64_t scratch = KernelScratchBytes(kernel);
    CheckMatMul(c->entry, s, o.epilogue, 0, 0, name + " whole", scratch);
    const int64_t t0 = tile(rng), t1 = tile(rng);
    CheckMatMul(c->entry, s, o.epilogue, t0, t1, absl::StrCat(name, " tiles ", t0, "x", t1),
                scratch);
    CheckMatMul(c->entry, s, o.epilogue, 0, 0, name + " no scratch", 0);
  }
}

TEST(MatMulConfigSweep, GridEnumeratesDistinctConfigs) {
  const MatMulConfigGrid grid;
  EXPECT_EQ(grid.size(), 5 * 4 * 4 * 4 * 3 * 2);
  std::set<std::string> seen;
  for (int64_t i = 0; i < grid.size(); ++i) seen.insert(ConfigName(grid.At(i)));
  EXPECT_EQ(static_cast<int64_t>(seen.size()), grid.size());
}

TEST(MatMulConfigSweep, SeededSample) {
  const MatMulConfigGrid grid;
  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<int64_t> pick(0, grid.size() - 1);
  for (int i = 0; i < kSampleSize; ++i) {
    const ir::TileConfig config = grid.At(pick(rng));
    const BLayout layout = i % 2 == 0 ? BLayout::kKN : BLayout::kNK;
    SCOPED_TRACE(ConfigName(config));
    CheckConfig(config, layout, rng);
    if (HasFatalFailure() || HasFailure()) return;
  }
}

// The boundary configs reach past the largest register file (the largest tile spills even on
// 32 registers) and include micro-tiles that fit 16.
TEST(MatMulConfigSweep, BoundaryConfigsSpanTheRegisterFile) {
  int64_t most = 0, least = std::numeric_limits<int64_t>::max();
  for (const ir::TileConfig& config : MatMulBoundaryConfigs()) {
    const int64_t registers = ir::MatMulMicroTileRegisters(config.mr, config.nr_vectors);
    most = std::max(most, registers);
    least = std::min(least, registers);
  }
  EXPECT_GT(most, 32);
  EXPECT_LE(least, 16);
}

TEST(MatMulConfigSweep, BoundaryConfigs) {
  std::mt19937 rng(kSeed + 1);
  for (const ir::TileConfig& config : MatMulBoundaryConfigs()) {
    for (BLayout layout : {BLayout::kKN, BLayout::kNK}) {
      SCOPED_TRACE(ConfigName(config));
      CheckConfig(config, layout, rng);
      if (HasFatalFailure() || HasFailure()) return;
    }
  }
}

}  // namespace
}  // namespace pto::jit::testing
