// Matmul kernels sweep their columns in panels sized from the L2 (TileConfig::panel_bytes):
// with a long K a panel is a few vector blocks wide, so several panels and a partial last one
// are exercised, in both micro-kernel forms (B [K, N] and B [N, K]), serial and parallel; so
// are the wider single-row micro-tiles (M = 1 and one-row M tails).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

struct PanelCase {
  int64_t m, k, n;
  bool transposed_b;  // B stored [N, K] (a linear layer's weight): the dot-product form
  int threads;
};

class MatMulPanels : public ::testing::TestWithParam<PanelCase> {};

TEST_P(MatMulPanels, MatchReference) {
  const PanelCase c = GetParam();
  TraceFn f = [&](std::span<const Value> v) {
    return std::vector<Value>{c.transposed_b ? matmul(v[0], transpose(v[1], 0, 1))
                                             : matmul(v[0], v[1])};
  };
  const std::vector<HostTensor> in = {
      HostTensor::Random({c.m, c.k}, 1),
      c.transposed_b ? HostTensor::Random({c.n, c.k}, 2) : HostTensor::Random({c.k, c.n}, 2)};
  std::unique_ptr<Runtime> rt = testing::OpenRuntime({.intra_op_threads = c.threads});
  auto fn = rt->JitTraced("mm", 2, f, {});
  ASSERT_TRUE(fn.ok()) << fn.status();
  auto got = testing::RunPto(**fn, in);
  ASSERT_TRUE(got.ok()) << got.status();
  auto want = testing::RunReference(f, in);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(testing::Compare(*got, *want, ops::OpTolerance(ir::OpKind::kMatMul, c.k)), "");
}

INSTANTIATE_TEST_SUITE_P(LongK, MatMulPanels,
                         ::testing::Values(PanelCase{13, 4096, 100, false, 1},
                                           PanelCase{13, 4096, 100, true, 1},
                                           PanelCase{50, 3000, 77, false, 2},
                                           PanelCase{50, 3000, 77, true, 2},
                                           PanelCase{7, 8192, 40, false, 1}));

// One row (matrix-vector) and single-row M tails take wider micro-tiles.
INSTANTIATE_TEST_SUITE_P(
    SingleRow, MatMulPanels,
    ::testing::Values(PanelCase{1, 4096, 300, false, 1}, PanelCase{1, 4096, 300, true, 2},
                      PanelCase{1, 100, 71, false, 2}, PanelCase{1, 100, 71, true, 1},
                      PanelCase{7, 512, 130, true, 1}, PanelCase{13, 300, 200, false, 2}));

// B [K, N] with rows of at most 512 bytes (N <= 128) is read in place, not packed; longer rows
// and constant weights (prepacked) keep packing. Both forms match the reference.
TEST(MatMulShortRowsOfB, ReadInPlaceUnlessConstantOrLong) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime({.intra_op_threads = 2});
  TraceFn f = [](std::span<const Value> v) { return std::vector<Value>{matmul(v[0], v[1])}; };
  struct Case {
    int64_t n;
    bool constant;
    const char* pack;
  };
  for (const Case& c : {Case{128, false, "pack 0"}, Case{64, false, "pack 0"},
                        Case{256, false, "pack 1"}, Case{128, true, "pack 1"}}) {
    FunctionOptions options;
    if (c.constant) options.constant_inputs = {1};
    auto fn = rt->JitTraced("mm", 2, f, options);
    ASSERT_TRUE(fn.ok()) << fn.status();
    auto tiles = (*fn)->Dump(Stage::kTile, {{300, 256}, {256, c.n}});
    ASSERT_TRUE(tiles.ok()) << tiles.status();
    EXPECT_NE(tiles->find(c.pack), std::string::npos) << "N " << c.n << "\n" << *tiles;
    const std::vector<HostTensor> in = {HostTensor::Random({300, 256}, 1),
                                        HostTensor::Random({256, c.n}, 2)};
    auto got = testing::RunPto(**fn, in);
    ASSERT_TRUE(got.ok()) << got.status();
    auto want = testing::RunReference(f, in);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(testing::Compare(*got, *want, ops::OpTolerance(ir::OpKind::kMatMul, 256)), "")
        << "N " << c.n;
  }
}

// A constant weight larger than any L2 (10 MiB) is prefetched (TileConfig::prefetch_b): at
// M = 8 (one row block per task) ahead of the micro-tiles' loads into the L1 (prefetcht0), at
// M = 128 (22 row blocks of 6) the next K block into the L2 (prefetcht1), at M = 32 (four row
// blocks of 8) both. A small weight (128 KiB) and a non-constant B (packed by the kernel into
// its scratch) are not prefetched. The schedule is checked on an AVX-512 machine like the one
// the rule was measured on (compiled, not run, so on any host); the prefetching kernels this
// host gets match the reference.
TEST(MatMulPrefetchB, ConstantWeightsBeyondTheL2) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime({.intra_op_threads = 2});
  TraceFn f = [](std::span<const Value> v) { return std::vector<Value>{matmul(v[0], v[1])}; };
  struct Case {
    int64_t m, k, n;
    bool constant, ahead, next_k_block;  // prefetcht0, prefetcht1 expected
  };
  for (const Case& c :
       {Case{8, 1024, 2560, true, true, false}, Case{32, 1024, 2560, true, true, true},
        Case{128, 1024, 2560, true, false, true}, Case{8, 256, 128, true, false, false},
        Case{8, 1024, 2560, false, false, false}}) {
    FunctionOptions options;
    if (c.constant) options.constant_inputs = {1};
    const device::DeviceInfo avx512 = testing::Avx512Device();
    auto lowered =
        testing::LowerStatic(f, {{c.m, c.k}, {c.k, c.n}}, avx512, options.constant_inputs);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    auto assembly = testing::ProgramAssembly(*lowered, avx512);
    ASSERT_TRUE(assembly.ok()) << assembly.status();
    const std::string what = absl::StrCat(c.m, "x", c.k, "x", c.n, c.constant ? " constant" : "");
    EXPECT_EQ(assembly->find("prefetcht0") != std::string::npos, c.ahead) << what;
    EXPECT_EQ(assembly->find("prefetcht1") != std::string::npos, c.next_k_block) << what;
    if (!c.ahead && !c.next_k_block) continue;
    auto fn = rt->JitTraced("mm", 2, f, options);
    ASSERT_TRUE(fn.ok()) << fn.status();
    const std::vector<HostTensor> in = {HostTensor::Random({c.m, c.k}, 1),
                                        HostTensor::Random({c.k, c.n}, 2)};
    auto got = testing::RunPto(**fn, in);
    ASSERT_TRUE(got.ok()) << got.status();
    auto want = testing::RunReference(f, in);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(testing::Compare(*got, *want, ops::OpTolerance(ir::OpKind::kMatMul, c.k)), "");
  }
}

}  // namespace
}  // namespace pto
