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

SymbolClass Class(int64_t value, const ir::SymbolInfo& info = kBatch) {
  return ClassifySymbol(value, info);
}

TEST(ShapeClassTest, ZeroAndOneAreClassesOfTheirOwn) {
  EXPECT_EQ(Class(0), (SymbolClass{0, 0}));
  EXPECT_EQ(Class(1), (SymbolClass{1, 1}));
  EXPECT_EQ(Class(0, {"n", 0, 10}), (SymbolClass{0, 0}));
}

TEST(ShapeClassTest, OtherValuesFallInPowerOfTwoBuckets) {
  EXPECT_EQ(Class(2), (SymbolClass{2, 3}));
  EXPECT_EQ(Class(3), (SymbolClass{2, 3}));
  EXPECT_EQ(Class(4), (SymbolClass{4, 7}));
  EXPECT_EQ(Class(7), (SymbolClass{4, 7}));
  EXPECT_EQ(Class(9), (SymbolClass{8, 15}));
  EXPECT_EQ(Class(1001), (SymbolClass{512, 1023}));
  EXPECT_EQ(Class(1025), (SymbolClass{1024, 2047}));
}

TEST(ShapeClassTest, MultiplesOfTheVectorWidthShareTheirBucket) {
  EXPECT_EQ(Class(8), (SymbolClass{8, 15}));
  EXPECT_EQ(Class(24), (SymbolClass{16, 31}));
  EXPECT_EQ(Class(24), Class(25));
  EXPECT_EQ(Class(1000), (SymbolClass{512, 1023}));
}

TEST(ShapeClassTest, BucketsAreClippedToTheSymbolsRange) {
  const ir::SymbolInfo range{"seq", 50, 100};
  EXPECT_EQ(Class(60, range), (SymbolClass{50, 63}));
  EXPECT_EQ(Class(56, range), (SymbolClass{50, 63}));
  EXPECT_EQ(Class(100, range), (SymbolClass{64, 100}));
  EXPECT_EQ(Class(96, range), (SymbolClass{64, 100}));
  // A bucket clipped to one value compiles as that constant.
  EXPECT_EQ(Class(64, {"n", 1, 64}), (SymbolClass{64, 64}));
  EXPECT_EQ(Class(2, {"n", 1, 2}), (SymbolClass{2, 2}));
}

TEST(ShapeClassTest, TheLargestBucketEndsAtTheRange) {
  const ir::SymbolInfo any{"n", 1, kMax};
  EXPECT_EQ(Class(kMax, any), (SymbolClass{int64_t{1} << 62, kMax}));
  EXPECT_EQ(Class((int64_t{1} << 62) - 1, any),
            (SymbolClass{int64_t{1} << 61, (int64_t{1} << 62) - 1}));
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
  const ShapeClass cls = Classify(values, infos);
  EXPECT_EQ(cls.symbols, (std::vector<SymbolClass>{{8, 15}, {1, 1}, {0, 6}}));
  EXPECT_EQ(cls.ToString(infos), "batch=[8..15], seq=1");
}

TEST(ShapeClassTest, GuardMatchesExactlyTheValuesOfTheClass) {
  const std::vector<ir::SymbolInfo> infos = Infos();
  const std::vector<int64_t> values = {16, 300, 6};
  const ShapeClass cls = Classify(values, infos);
  EXPECT_EQ(cls.ToString(infos), "batch=[16..31], seq=[256..511]");
  for (const std::vector<int64_t>& same :
       std::vector<std::vector<int64_t>>{{24, 511, 0},     // the derived symbol does not count
                                         {31, 256, 6}}) {  // the bucket's bounds
    EXPECT_TRUE(Matches(cls, same, infos)) << same[0] << ", " << same[1];
  }
  for (const std::vector<int64_t>& other :
       std::vector<std::vector<int64_t>>{{32, 300, 6},   // the next bucket
                                         {15, 300, 6},   // the previous one
                                         {16, 255, 6},   // seq's previous one
                                         {16, 1, 6}}) {  // 1 is a class of its own
    EXPECT_FALSE(Matches(cls, other, infos)) << other[0] << ", " << other[1];
  }
}

TEST(ShapeClassTest, TheGenericClassTakesEveryValueOfTheRanges) {
  const std::vector<ir::SymbolInfo> infos = Infos();
  const ShapeClass cls = GenericClass(infos);
  EXPECT_TRUE(cls.generic);
  EXPECT_EQ(cls.symbols, (std::vector<SymbolClass>{{1, 4096}, {1, 512}, {0, 6}}));
  EXPECT_EQ(cls.ToString(infos), "batch=[1..4096], seq=[1..512]");
  for (const std::vector<int64_t>& in :
       std::vector<std::vector<int64_t>>{{1, 1, 0}, {8, 9, 1}, {4096, 512, 6}, {17, 300, 6}}) {
    EXPECT_TRUE(Matches(cls, in, infos)) << in[0] << ", " << in[1];
  }
  EXPECT_FALSE(Matches(cls, std::vector<int64_t>{4097, 1, 0}, infos));
  EXPECT_FALSE(Matches(cls, std::vector<int64_t>{0, 1, 0}, infos));
  // Not the class of a bucket with the same ranges: that one refuses 1.
  ShapeClass bucket = cls;
  bucket.generic = false;
  EXPECT_NE(cls, bucket);
  EXPECT_FALSE(Matches(bucket, std::vector<int64_t>{1, 1, 0}, infos));
  // Every symbol stays symbolic, 0 and 1 included; a range of one value is that constant.
  const Specialization sp = Specialize(cls, infos);
  for (int s = 0; s < 3; ++s) EXPECT_FALSE(sp.replacement[s].has_value()) << s;
  const std::vector<ir::SymbolInfo> fixed = {{"n", 7, 7}};
  EXPECT_EQ(Specialize(GenericClass(fixed), fixed).replacement[0], SymExpr(7));
}

TEST(ShapeClassTest, SpecializeBindsConstants) {
  const std::vector<ir::SymbolInfo> infos = Infos();
  // batch in [16, 31]; seq = 10.
  const ShapeClass cls{{{16, 31}, {10, 10}, {0, 6}}};
  const Specialization sp = Specialize(cls, infos);
  // batch stays symbolic, read from call symbol 0, with its declared range.
  ASSERT_EQ(sp.replacement.size(), 3u);
  EXPECT_FALSE(sp.replacement[0].has_value());
  ASSERT_EQ(sp.symbols.size(), 3u);
  EXPECT_EQ(sp.symbols[0].min, 1);
  EXPECT_EQ(sp.symbols[0].max, 4096);
  // seq is the constant 10; the derived length of seq[2:40:7] then too: 2 and 9.
  EXPECT_EQ(sp.replacement[1], SymExpr(10));
  EXPECT_EQ(sp.replacement[2], SymExpr(2));
  ASSERT_TRUE(sp.symbols[2].derived.has_value());
  EXPECT_EQ(sp.symbols[2].derived->dim, SymExpr(10));
  ASSERT_EQ(sp.sources.size(), 3u);
  EXPECT_EQ(sp.sources[0].symbol, 0);
  EXPECT_EQ(sp.sources[1].symbol, -1);
  EXPECT_EQ(sp.sources[1].constant, 10);
  EXPECT_EQ(sp.sources[2].symbol, -1);
  EXPECT_EQ(sp.sources[2].constant, 2);
}

TEST(ShapeClassTest, SpecializeLeavesBucketsSymbolic) {
  const std::vector<ir::SymbolInfo> infos = Infos();
  const ShapeClass cls{{{2, 3}, {256, 511}, {0, 6}}};
  const Specialization sp = Specialize(cls, infos);
  for (int s = 0; s < 3; ++s) {
    EXPECT_FALSE(sp.replacement[s].has_value()) << s;
    EXPECT_EQ(sp.sources[s].symbol, s);
  }
  ASSERT_EQ(sp.symbols.size(), 3u);
  // The derived symbol is read at run time, over the symbol it is computed from.
  EXPECT_EQ(sp.symbols[2].derived->dim, SymExpr::Symbol(1));
}

}  // namespace
}  // namespace pto::jit
