// Trace variants (jit/trace_variants.h): how a call's dims fit a variant, typed (never by the
// text of a message), symbol binding, automatic dynamic dims and shape-class keys.
#include "jit/trace_variants.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pto/pto.h"

namespace pto::detail {
namespace {

using ::testing::HasSubstr;

// x [n, 8] + y [n, 8], n declared as `name` in [1, 64].
TraceVariants AddOfDeclared(const std::string& name, bool automatic_dynamic = true) {
  FunctionOptions options;
  options.dynamic = {{0, 0, Dim(name, 1, 64)}, {1, 0, Dim(name, 1, 64)}};
  options.automatic_dynamic = automatic_dynamic;
  return TraceVariants(
      "add", 2, [](std::span<const Value> v) { return std::vector<Value>{v[0] + v[1]}; }, options);
}

struct Dims {
  std::vector<std::vector<int64_t>> shapes;
  CallShapes Get() const {
    CallShapes s;
    for (size_t i = 0; i < shapes.size(); ++i) {
      s.rank[i] = static_cast<int>(shapes[i].size());
      s.dims[i] = shapes[i].data();
    }
    return s;
  }
};

TEST(TraceVariants, TheFirstCallTracesWithTheDeclaredDimsSymbolic) {
  TraceVariants variants = AddOfDeclared("n");
  const Dims dims{{{4, 8}, {4, 8}}};
  absl::StatusOr<const TraceVariant*> v = variants.For(dims.Get());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(variants.traces(), 1);
  ASSERT_EQ((*v)->symbols.size(), 1u);
  EXPECT_EQ((*v)->symbols[0].name, "n");
  EXPECT_TRUE((*v)->declared[0]);
  EXPECT_EQ((*v)->inputs[0][0].symbol, 0);
  EXPECT_EQ((*v)->inputs[0][1].value, 8);
  int64_t values[jit::kMaxSymbols];
  const Dims other{{{17, 8}, {17, 8}}};
  EXPECT_TRUE(BindSymbols(**v, other.Get(), values));
  EXPECT_EQ(values[0], 17);
  // Served by the same variant: no second trace.
  EXPECT_EQ(*variants.For(other.Get()), *v);
  EXPECT_EQ(variants.traces(), 1);
}

TEST(TraceVariants, HowDimsFitIsTyped) {
  TraceVariants variants = AddOfDeclared("n");
  const Dims first{{{4, 8}, {4, 8}}};
  const TraceVariant& v = **variants.For(first.Get());
  EXPECT_EQ(CheckSymbolValues(v, first.Get()).fit, SymbolFit::kFits);

  const Dims rank{{{4, 8, 1}, {4, 8}}};
  SymbolCheck c = CheckSymbolValues(v, rank.Get());
  EXPECT_EQ(c.fit, SymbolFit::kRefused);
  EXPECT_THAT(c.status.message(), HasSubstr("does not match the traced rank"));

  const Dims outside{{{65, 8}, {65, 8}}};
  c = CheckSymbolValues(v, outside.Get());
  EXPECT_EQ(c.fit, SymbolFit::kRefused);
  EXPECT_THAT(c.status.message(), HasSubstr("outside the declared range [1, 64]"));

  const Dims disagree{{{4, 8}, {5, 8}}};
  c = CheckSymbolValues(v, disagree.Get());
  EXPECT_EQ(c.fit, SymbolFit::kOtherVariant);
  EXPECT_THAT(c.status.message(), HasSubstr("gives n = 4"));
}

// A dim named like a word of another message ("rank", "declared range") is judged by what
// happened, not by the text.
TEST(TraceVariants, ADimsNameDoesNotDecide) {
  for (const char* name : {"rank", "declared range"}) {
    TraceVariants variants = AddOfDeclared(name);
    const Dims first{{{4, 8}, {4, 8}}};
    const TraceVariant& v = **variants.For(first.Get());
    const Dims disagree{{{4, 8}, {5, 8}}};
    const SymbolCheck c = CheckSymbolValues(v, disagree.Get());
    EXPECT_EQ(c.fit, SymbolFit::kOtherVariant) << name;
    EXPECT_THAT(c.status.message(), HasSubstr(std::string("gives ") + name)) << name;
  }
}

TEST(TraceVariants, AChangedStaticDimBecomesSymbolic) {
  TraceVariants variants = AddOfDeclared("n");
  const Dims first{{{4, 8}, {4, 8}}};
  ASSERT_TRUE(variants.For(first.Get()).ok());
  const Dims wider{{{4, 16}, {4, 16}}};
  absl::StatusOr<const TraceVariant*> v = variants.For(wider.Get());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(variants.traces(), 2);
  // x's and y's second dims changed from 8 to 16 together: one automatic symbol for both.
  ASSERT_EQ((*v)->symbols.size(), 2u);
  EXPECT_FALSE((*v)->declared[1]);
  EXPECT_EQ((*v)->inputs[0][1].symbol, 1);
  EXPECT_EQ((*v)->inputs[1][1].symbol, 1);
}

TEST(TraceVariants, WithoutAutomaticDynamicAChangedDimIsRefused) {
  TraceVariants variants = AddOfDeclared("n", /*automatic_dynamic=*/false);
  const Dims first{{{4, 8}, {4, 8}}};
  ASSERT_TRUE(variants.For(first.Get()).ok());
  const Dims wider{{{4, 16}, {4, 16}}};
  absl::StatusOr<const TraceVariant*> v = variants.For(wider.Get());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(v.status().message(),
              HasSubstr("input 0 dim 1 is 16 but the function was traced with 8"));
}

TEST(TraceVariants, ShapeClassKeyNamesEachSymbolByItsFirstDim) {
  TraceVariants variants = AddOfDeclared("n");
  const Dims first{{{4, 8}, {4, 8}}};
  const TraceVariant& v = **variants.For(first.Get());
  jit::ShapeClass cls;
  cls.symbols = {{64, 127}};
  EXPECT_EQ(ShapeClassKey(v, cls), "in0.0=[64..127]");
  cls.symbols = {{1, 1}};
  EXPECT_EQ(ShapeClassKey(v, cls), "in0.0=1");
}

TEST(TraceVariants, ShapeClassLabelNamesDeclaredDims) {
  TraceVariants variants = AddOfDeclared("batch");
  const Dims first{{{4, 8}, {4, 8}}};
  ASSERT_TRUE(variants.For(first.Get()).ok());
  const Dims wider{{{4, 16}, {4, 16}}};
  const TraceVariant& v = **variants.For(wider.Get());  // x's dim 1 made symbolic
  jit::ShapeClass cls;
  cls.symbols = {{4, 7}, {16, 31}};
  EXPECT_EQ(ShapeClassLabel(v, cls), "batch=[4..7],in0.1=[16..31]");
  // The key names both by their place: a process that declares them gets the same records.
  EXPECT_EQ(ShapeClassKey(v, cls), "in0.0=[4..7],in0.1=[16..31]");
}

}  // namespace
}  // namespace pto::detail
