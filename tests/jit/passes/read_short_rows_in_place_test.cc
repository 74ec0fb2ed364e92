// ReadShortRowsOfBInPlace (jit/passes/read_short_rows_in_place.h) alone: a matmul whose B is
// not prepacked and is read in the broadcast form (N stride 1) with rows of at most 512 bytes
// (a static K stride of at most 128 f32) reads B in place (pack_b = false); any other kernel
// keeps its config.
#include "jit/passes/read_short_rows_in_place.h"

#include "gtest/gtest.h"
#include "tests/jit/passes/builders.h"

namespace pto::jit {
namespace {

using ir::SymExpr;
using testing::MatMul;
using testing::MatMulDims;

// Whether the pass leaves `kernel`'s pack_b set (it starts set).
bool StillPacks(ir::Kernel kernel) {
  kernel.config.pack_b = true;
  testing::TileGraphBuilder t({{"n", 1, 1024}});
  const int a = t.Input(0, 1), b = t.Input(1, 1), c = t.Temp(1);
  const int call = t.Call(std::move(kernel), {a, b, c});
  ReadShortRowsOfBInPlace(t.graph());
  return t.graph().calls[call].kernel.config.pack_b;
}

TEST(ReadShortRowsInPlaceTest, RowsOfAtMost128FloatsAreReadInPlace) {
  EXPECT_FALSE(StillPacks(MatMul({.m = 256, .n = 128, .k = 64})));
  EXPECT_FALSE(StillPacks(MatMul({.m = 256, .n = 1, .k = 64})));
  EXPECT_TRUE(StillPacks(MatMul({.m = 256, .n = 129, .k = 64})));
  EXPECT_TRUE(StillPacks(MatMul({.m = 256, .n = 4096, .k = 64})));
  // Batched, each entry its B or all one: the rows are what counts.
  EXPECT_FALSE(StillPacks(MatMul({.m = 8, .n = 64, .k = 8, .batch = 4})));
  EXPECT_FALSE(StillPacks(MatMul({.m = 8, .n = 64, .k = 8, .batch = 4, .b_shared = true})));
}

TEST(ReadShortRowsInPlaceTest, OnlyTheBroadcastFormWithStaticRows) {
  // [N, K]: K stride 1, N stride K (the dot-product form).
  EXPECT_TRUE(StillPacks(MatMul({.m = 256, .n = 64, .k = 64, .b_transposed = true})));
  // A row length known only at run time.
  EXPECT_TRUE(StillPacks(MatMul({.m = 256, .n = SymExpr::Symbol(0), .k = 64})));
}

TEST(ReadShortRowsInPlaceTest, PrepackedBIsLeftAlone) {
  ir::Kernel k = MatMul({.m = 256, .n = 64, .k = 64});
  k.b_packed = 3;
  k.b_packed_block = 16;
  k.num_buffers = 4;
  EXPECT_TRUE(StillPacks(k));
}

TEST(ReadShortRowsInPlaceTest, OtherKernelsAreLeftAlone) {
  EXPECT_TRUE(StillPacks(testing::Elementwise({4, 4}, ir::ExprOp::kNeg)));
  ir::Kernel no_b = MatMul({.m = 256, .n = 64, .k = 64});
  no_b.b = -1;
  EXPECT_TRUE(StillPacks(no_b));
}

}  // namespace
}  // namespace pto::jit
