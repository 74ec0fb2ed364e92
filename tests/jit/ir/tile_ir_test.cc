// KernelToString is a kernel's identity (in-process memo and persistent cache key): any change
// that changes the generated code must change it.
#include "jit/ir/tile_ir.h"

#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace pto::ir {
namespace {

Kernel Base() {
  Kernel k;
  k.kind = KernelKind::kReduce;
  k.name = "f32_reduce";
  k.num_buffers = 2;
  k.domain = {SymExpr(4), SymExpr::Symbol(0)};
  k.accesses = {Access{0, SymExpr(0), {SymExpr::Symbol(0), SymExpr(1)}, DType::kF32},
                Access{1, SymExpr(0), {SymExpr(1), SymExpr(0)}, DType::kF32}};
  k.input = {ExprNode{ExprOp::kLoad, -1, -1, 0, 0}, ExprNode{ExprOp::kConst, -1, -1, -1, 0.1f},
             ExprNode{ExprOp::kMul, 0, 1, -1, 0}};
  k.input_value = 2;
  k.output = {ExprNode{ExprOp::kAcc}};
  k.stores = {Store{1, 0}};
  k.axis = 1;
  k.reduce = ReduceKind::kSum;
  k.row_op = RowOpKind::kSoftmax;
  k.eps = 1e-5f;
  k.k = SymExpr(3);
  k.a = 0;
  k.b = 1;
  return k;
}

TEST(KernelToString, EveryFieldThatChangesCodeChangesTheText) {
  const std::vector<std::pair<std::string, std::function<void(Kernel&)>>> edits = {
      {"kind", [](Kernel& k) { k.kind = KernelKind::kRowOp; }},
      {"num_buffers", [](Kernel& k) { k.num_buffers = 3; }},
      {"domain", [](Kernel& k) { k.domain[0] = SymExpr(5); }},
      {"access buffer", [](Kernel& k) { k.accesses[0].buffer = 1; }},
      {"access offset", [](Kernel& k) { k.accesses[0].offset = SymExpr(1); }},
      {"access stride", [](Kernel& k) { k.accesses[0].strides[1] = SymExpr(2); }},
      {"access dtype", [](Kernel& k) { k.accesses[0].dtype = DType::kBF16; }},
      {"input op", [](Kernel& k) { k.input[2].op = ExprOp::kAdd; }},
      {"constant by one ulp", [](Kernel& k) { k.input[1].value = std::nextafter(0.1f, 1.0f); }},
      {"input_value", [](Kernel& k) { k.input_value = 1; }},
      {"output",
       [](Kernel& k) {
         k.output.push_back(ExprNode{ExprOp::kExp, 0});
       }},
      {"store", [](Kernel& k) { k.stores[0].access = 0; }},
      {"axis", [](Kernel& k) { k.axis = 0; }},
      {"reduce kind", [](Kernel& k) { k.reduce = ReduceKind::kMax; }},
      {"tile_rows", [](Kernel& k) { k.config.tile_rows = 2; }},
      {"tile_cols", [](Kernel& k) { k.config.tile_cols = 64; }},
      {"vector_width", [](Kernel& k) { k.config.vector_width = 4; }},
      {"unroll", [](Kernel& k) { k.config.unroll = 4; }},
      {"mr", [](Kernel& k) { k.config.mr = 6; }},
      {"nr", [](Kernel& k) { k.config.nr_vectors = 3; }},
  };
  std::set<std::string> seen = {KernelToString(Base(), {})};
  for (const auto& [what, edit] : edits) {
    Kernel k = Base();
    edit(k);
    EXPECT_TRUE(seen.insert(KernelToString(k, {})).second) << what << " did not change the text";
  }
  // Row-op and matmul specific fields.
  Kernel row = Base();
  row.kind = KernelKind::kRowOp;
  const std::string row_text = KernelToString(row, {});
  row.row_op = RowOpKind::kLayerNorm;
  EXPECT_NE(KernelToString(row, {}), row_text);
  Kernel eps = row;
  eps.eps = 1e-6f;
  EXPECT_NE(KernelToString(eps, {}), KernelToString(row, {}));
  Kernel mm = Base();
  mm.kind = KernelKind::kMatMul;
  const std::string mm_text = KernelToString(mm, {});
  mm.k = SymExpr(4);
  EXPECT_NE(KernelToString(mm, {}), mm_text);
  Kernel swapped = Base();
  swapped.kind = KernelKind::kMatMul;
  std::swap(swapped.a, swapped.b);
  EXPECT_NE(KernelToString(swapped, {}), mm_text);
}

TEST(SymExpr, PolynomialArithmetic) {
  const SymExpr b = SymExpr::Symbol(0), s = SymExpr::Symbol(1);
  const SymExpr bs = b * s * SymExpr(768);
  EXPECT_EQ(bs.ToString(std::vector<std::string>{"batch", "seq"}), "768*batch*seq");
  EXPECT_EQ(*bs.DivExact(SymExpr(768) * b), s);
  EXPECT_FALSE(bs.DivExact(SymExpr(5)).has_value());
  EXPECT_EQ((b + s) - b, s);
  EXPECT_TRUE((b - b).IsConstant());
  const int64_t values[] = {3, 5};
  EXPECT_EQ(bs.Evaluate(values), 768 * 15);
  bool overflow = false;
  const int64_t huge[] = {int64_t{1} << 40, int64_t{1} << 40};
  (void)bs.Evaluate(huge, &overflow);
  EXPECT_TRUE(overflow);
  std::vector<std::optional<SymExpr>> bind = {SymExpr(1), std::nullopt};
  EXPECT_EQ(bs.Substitute(bind), SymExpr(768) * s);
}

TEST(SymExpr, AsSymbolOnlyForOneSymbolAlone) {
  const SymExpr b = SymExpr::Symbol(0), s = SymExpr::Symbol(1);
  EXPECT_EQ(s.AsSymbol(), 1);
  EXPECT_EQ(SymExpr(2).AsSymbol(), std::nullopt);
  EXPECT_EQ((SymExpr(2) * b).AsSymbol(), std::nullopt);
  EXPECT_EQ((b * b).AsSymbol(), std::nullopt);
  EXPECT_EQ((b * s).AsSymbol(), std::nullopt);
  EXPECT_EQ((b + SymExpr(1)).AsSymbol(), std::nullopt);
}

// An mr x nr_vectors micro-tile holds mr * nr_vectors accumulators, nr_vectors B vectors and one
// broadcast of A.
TEST(MatMulMicroTileRegisters, AccumulatorsBVectorsAndOneBroadcast) {
  EXPECT_EQ(MatMulMicroTileRegisters(1, 1), 3);
  EXPECT_EQ(MatMulMicroTileRegisters(6, 2), 15);  // AVX2's default: 15 of 16
  EXPECT_EQ(MatMulMicroTileRegisters(2, 4), 13);
  EXPECT_EQ(MatMulMicroTileRegisters(4, 4), 21);
  EXPECT_EQ(MatMulMicroTileRegisters(8, 3), 28);
  EXPECT_EQ(MatMulMicroTileRegisters(6, 4), 29);  // AVX-512's default: 29 of 32
  EXPECT_EQ(MatMulMicroTileRegisters(16, 4), 69);
  static_assert(MatMulMicroTileRegisters(8, 2) == 19, "usable in constant expressions");
  for (int64_t mr = 1; mr <= 16; ++mr) {
    for (int64_t nr = 1; nr <= 8; ++nr) {
      // One more row adds a row of nr accumulators; one more vector of columns adds an
      // accumulator per row and a B vector.
      EXPECT_EQ(MatMulMicroTileRegisters(mr + 1, nr) - MatMulMicroTileRegisters(mr, nr), nr);
      EXPECT_EQ(MatMulMicroTileRegisters(mr, nr + 1) - MatMulMicroTileRegisters(mr, nr), mr + 1);
    }
  }
}

// A matmul [M, N] over K: B stored [K, N] is the broadcast form, [N, K] the dot-product form,
// and a malformed b access neither. K blocks need the one f32 store.
TEST(MatMulKernel, DotFormAndKBlocksFollowTheStridesAndTheStore) {
  Kernel k;
  k.kind = KernelKind::kMatMul;
  k.domain = {SymExpr(8), SymExpr(16)};
  k.k = SymExpr(32);
  const SymExpr zero(0), one(1);
  k.accesses = {Access{0, zero, {SymExpr(32), zero, one}, DType::kF32},
                Access{1, zero, {zero, one, SymExpr(16)}, DType::kF32},
                Access{2, zero, {SymExpr(16), one}, DType::kF32}};
  k.a = 0;
  k.b = 1;
  k.output = {ExprNode{ExprOp::kAcc}};
  k.stores = {Store{2, 0}};
  EXPECT_FALSE(MatMulDotForm(k));
  EXPECT_TRUE(MatMulCanBlockK(k));
  k.accesses[1].strides = {zero, SymExpr(32), one};  // B stored [N, K]
  EXPECT_TRUE(MatMulDotForm(k));
  k.accesses[1].strides = {zero, SymExpr::Symbol(0), one};  // N stride symbolic
  EXPECT_TRUE(MatMulDotForm(k));
  k.accesses[1].strides = {zero, one};  // too short for [M, N, K]
  EXPECT_FALSE(MatMulDotForm(k));
  k.b = 7;
  EXPECT_FALSE(MatMulDotForm(k));
  k.accesses[2].dtype = DType::kI32;
  EXPECT_FALSE(MatMulCanBlockK(k));
  k.accesses[2].dtype = DType::kF32;
  k.stores.push_back(Store{2, 0});
  EXPECT_FALSE(MatMulCanBlockK(k));
  k.stores = {Store{9, 0}};
  EXPECT_FALSE(MatMulCanBlockK(k));
}

}  // namespace
}  // namespace pto::ir
