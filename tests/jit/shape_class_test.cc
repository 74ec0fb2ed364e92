// Shape classes (jit/shape_class.h) on their own: 0 and 1 are classes of their own, other
// values fall in power-of-two buckets clipped to the symbol's range, multiples of the vector
// width are split out (not in a bucket of one value), derived symbols take their whole range,
// the guard agrees with the classification, and Specialize turns a class into replacements,
// symbols and sources. The end-to-end counts of compiles per class are in
// tests/jit/e2e/shape_class_test.cc.
#include "jit/shape_class.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "gtest/gtest.h"

namespace pto::jit {
namespace {

using ir::SymExpr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
const ir::SymbolInfo kBatch{"batch", 1, 4096};

SymbolClass Class(int64_t value, const ir::SymbolInfo& info = kBatch, int64_t lanes = 8) {
  return ClassifySymbol(value, info, lanes);
}

TEST(ShapeClassTest, ZeroAndOneAreClassesOfTheirOwn) {
  EXPECT_EQ(Class(0), (SymbolClass{0, 0, 1}));
  EXPECT_EQ(Class(1), (SymbolClass{1, 1, 1}));
  EXPECT_EQ(Class(0, {"n", 0, 10}), (SymbolClass{0, 0, 1}));
}

TEST(ShapeClassTest, OtherValuesFallInPowerOfTwoBuckets) {
  EXPECT_EQ(Class(2), (SymbolClass{2, 3, 1}));
  EXPECT_EQ(Class(3), (SymbolClass{2, 3, 1}));
  EXPECT_EQ(Class(4), (SymbolClass{4, 7, 1}));
  EXPECT_EQ(Class(7), (SymbolClass{4, 7, 1}));
  EXPECT_EQ(Class(9), (SymbolClass{8, 15, 1}));
  EXPECT_EQ(Class(1001), (SymbolClass{512, 1023, 1}));
  EXPECT_EQ(Class(1025), (SymbolClass{1024, 2047, 1}));
}

TEST(ShapeClassTest, MultiplesOfTheVectorWidthAreSplitOut) {
  EXPECT_EQ(Class(8), (SymbolClass{8, 15, 8}));
  EXPECT_EQ(Class(24), (SymbolClass{16, 31, 8}));
  EXPECT_EQ(Class(1000, kBatch, 8), (SymbolClass{512, 1023, 8}));
  EXPECT_EQ(Class(1000, kBatch, 16), (SymbolClass{512, 1023, 1}));
  // Four lanes: 4 itself is a multiple; one lane splits nothing out.
  EXPECT_EQ(Class(4, kBatch, 4), (SymbolClass{4, 7, 4}));
  EXPECT_EQ(Class(16, kBatch, 1), (SymbolClass{16, 31, 1}));
}

TEST(ShapeClassTest, BucketsAreClippedToTheSymbolsRange) {
  const ir::SymbolInfo range{"seq", 50, 100};
  EXPECT_EQ(Class(60, range), (SymbolClass{50, 63, 1}));
  EXPECT_EQ(Class(56, range), (SymbolClass{50, 63, 8}));
  EXPECT_EQ(Class(100, range), (SymbolClass{64, 100, 1}));
  EXPECT_EQ(Class(96, range), (SymbolClass{64, 100, 8}));
  // A bucket clipped to one value compiles as that constant: no divisor.
  EXPECT_EQ(Class(64, {"n", 1, 64}), (SymbolClass{64, 64, 1}));
  EXPECT_EQ(Class(2, {"n", 1, 2}), (SymbolClass{2, 2, 1}));
}

TEST(ShapeClassTest, TheLargestBucketEndsAtTheRange) {
  const ir::SymbolInfo any{"n", 1, kMax};
  EXPECT_EQ(Class(kMax, any), (SymbolClass{int64_t{1} << 62, kMax, 1}));
  EXPECT_EQ(Class((int64_t{1} << 62) - 1, any),
            (SymbolClass{int64_t{1} << 61, (int64_t{1} << 62) - 1, 1}));
}

// batch and seq are bound from input dims; `rows` (symbol 2) is the length of seq[2:40:7].
std::vector<ir::SymbolInfo> Infos() {
  ir::SymbolInfo rows{"seq[2:40:7]", 0, 6};
  rows.derived =
      ir::DerivedSymbol{ir::DerivedSymbol::Kind::kSliceLength, SymExpr::Symbol(1), 2, 40, 7};
  return {kBatch, {"seq", 1, 512}, rows};
}

TEST(ShapeClassTest, DerivedSymbolsTakeTheirWholeRange) {
  const std::vector<ir::SymbolInfo> infos = Infos();
  const std::vector<int64_t> values = {9, 1, 5};
  const ShapeClass cls = Classify(values, infos, 8);
  EXPECT_EQ(cls.symbols, (std::vector<SymbolClass>{{8, 15, 1}, {1, 1, 1}, {0, 6, 1}}));
  EXPECT_EQ(cls.ToString(infos), "batch=[8..15], seq=1");
}

TEST(ShapeClassTest, GuardMatchesExactlyTheValuesOfTheClass) {
  const std::vector<ir::SymbolInfo> infos = Infos();
  const std::vector<int64_t> values = {16, 300, 6};
  const ShapeClass cls = Classify(values, infos, 8);
  EXPECT_EQ(cls.ToString(infos), "batch=[16..31] %8, seq=[256..511]");
  const std::vector<int64_t> same = {24, 511, 0};  // the derived symbol does not count
  EXPECT_TRUE(Matches(cls, same, infos, 8));
  for (const std::vector<int64_t>& other :
       std::vector<std::vector<int64_t>>{{25, 300, 6},   // not a multiple of 8
                                         {32, 300, 6},   // the next bucket
                                         {16, 255, 6},   // the previous one
                                         {16, 1, 6}}) {  // 1 is a class of its own
    EXPECT_FALSE(Matches(cls, other, infos, 8)) << other[0] << ", " << other[1];
  }
  // The guard uses the lanes it is given.
  EXPECT_FALSE(Matches(cls, values, infos, 16));
}

TEST(ShapeClassTest, SpecializeBindsConstantsAndDivisibleSymbols) {
  const std::vector<ir::SymbolInfo> infos = Infos();
  // batch in [16, 31] and a multiple of 8; seq = 10.
  const ShapeClass cls{{{16, 31, 8}, {10, 10, 1}, {0, 6, 1}}};
  const Specialization sp = Specialize(cls, infos);
  // batch = 8 * batch/8, a new symbol 3 of range [2, 3] read as call symbol 0 / 8.
  ASSERT_EQ(sp.replacement.size(), 3u);
  EXPECT_EQ(sp.replacement[0], SymExpr(8) * SymExpr::Symbol(3));
  ASSERT_EQ(sp.symbols.size(), 4u);
  EXPECT_EQ(sp.symbols[3].name, "batch/8");
  EXPECT_EQ(sp.symbols[3].min, 2);
  EXPECT_EQ(sp.symbols[3].max, 3);
  // seq is the constant 10; the derived length of seq[2:40:7] then too: 2 and 9.
  EXPECT_EQ(sp.replacement[1], SymExpr(10));
  EXPECT_EQ(sp.replacement[2], SymExpr(2));
  ASSERT_TRUE(sp.symbols[2].derived.has_value());
  EXPECT_EQ(sp.symbols[2].derived->dim, SymExpr(10));
  ASSERT_EQ(sp.sources.size(), 4u);
  EXPECT_EQ(sp.sources[0].symbol, 0);
  EXPECT_EQ(sp.sources[0].divisor, 1);
  EXPECT_EQ(sp.sources[1].symbol, -1);
  EXPECT_EQ(sp.sources[1].constant, 10);
  EXPECT_EQ(sp.sources[2].symbol, -1);
  EXPECT_EQ(sp.sources[2].constant, 2);
  EXPECT_EQ(sp.sources[3].symbol, 0);
  EXPECT_EQ(sp.sources[3].divisor, 8);
}

TEST(ShapeClassTest, SpecializeLeavesBucketsSymbolic) {
  const std::vector<ir::SymbolInfo> infos = Infos();
  const ShapeClass cls{{{2, 3, 1}, {256, 511, 1}, {0, 6, 1}}};
  const Specialization sp = Specialize(cls, infos);
  for (int s = 0; s < 3; ++s) {
    EXPECT_FALSE(sp.replacement[s].has_value()) << s;
    EXPECT_EQ(sp.sources[s].symbol, s);
    EXPECT_EQ(sp.sources[s].divisor, 1);
  }
  ASSERT_EQ(sp.symbols.size(), 3u);
  // The derived symbol is read at run time, over the symbol it is computed from.
  EXPECT_EQ(sp.symbols[2].derived->dim, SymExpr::Symbol(1));
}

}  // namespace
}  // namespace pto::jit
