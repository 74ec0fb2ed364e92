// Shape classes: one compile per class touched (asserted exactly), symbolic arithmetic through
// reshapes with two symbols, automatic dynamic dims, and the recompile cap (then the generic
// class).
#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/shape_class.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

void ExpectMatchesReference(Function& fn, const TraceFn& trace, const std::vector<HostTensor>& in,
                            ops::Tolerance tol) {
  absl::StatusOr<std::vector<HostTensor>> got = testing::RunPto(fn, in);
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(trace, in);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(testing::Compare(*got, *want, tol), "");
}

TEST(ShapeClasses, OneCompilePerClassTouched) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  Dim batch("batch", 1, 4096);
  TraceFn trace = [](std::span<const Value> v) {
    return std::vector<Value>{gelu(matmul(v[0], v[1]) + v[2])};
  };
  auto fn = rt->JitTraced("mlp", 3, trace, {.dynamic = {{0, 0, batch}}});
  ASSERT_TRUE(fn.ok());
  ir::SymbolInfo info{"batch", 1, 4096};
  std::set<std::pair<int64_t, int64_t>> classes;
  const HostTensor w = HostTensor::Random({24, 10}, 1), b = HostTensor::Random({10}, 2);
  for (int64_t n : {1, 2, 3, 5, 7, 8, 9, 16, 17, 31, 32, 33, 100, 128, 129, 255, 256, 300, 1}) {
    SCOPED_TRACE(n);
    jit::SymbolClass c = jit::ClassifySymbol(n, info);
    classes.insert({c.lo, c.hi});
    ExpectMatchesReference(**fn, trace, {HostTensor::Random({n, 24}, n), w, b},
                           ops::OpTolerance(ir::OpKind::kMatMul, 24));
    EXPECT_EQ((*fn)->stats().compiles, static_cast<int64_t>(classes.size()));
  }
  EXPECT_EQ((*fn)->stats().traces, 1);
  // 1 | [2,3] | [4,7] | [8,15] | [16,31] | [32,63] | [64,127] | [128,255] | [256,511]:
  // every class once, however often it is called (9 compiles).
  EXPECT_EQ(classes.size(), 9u);
  const int64_t compiles = (*fn)->stats().compiles;
  for (int64_t n : {4, 6, 12, 24, 40, 48, 200, 250}) {
    jit::SymbolClass c = jit::ClassifySymbol(n, info);
    const bool known = classes.count({c.lo, c.hi}) > 0;
    classes.insert({c.lo, c.hi});
    ExpectMatchesReference(**fn, trace, {HostTensor::Random({n, 24}, n), w, b},
                           ops::OpTolerance(ir::OpKind::kMatMul, 24));
    EXPECT_EQ((*fn)->stats().compiles, static_cast<int64_t>(classes.size()));
    if (known) {
      EXPECT_EQ((*fn)->stats().compiles, compiles);
    }
  }
}

TEST(ShapeClasses, TwoSymbolsThroughReshapes) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  Dim batch("batch", 1, 64), seq("seq", 1, 512);
  TraceFn trace = [](std::span<const Value> v) {
    Value x = reshape(v[0], {-1, 16});                       // [batch*seq, 16]
    Value h = linear(x, v[1], v[2]);                         // [batch*seq, 8]
    Value back = reshape(h, {-1, 4, 2});                     // [batch*seq, 4, 2]
    Value heads = transpose(reshape(v[0], {0, 0, 4, 4}), 1, 2);  // [batch, 4, seq, 4]
    return std::vector<Value>{softmax(reshape(back, {-1, 8})) + reshape(v[3], {-1, 8}),
                              reduce_sum(heads, -1)};
  };
  auto fn = rt->JitTraced("two_symbols", 4, trace,
                          {.dynamic = {{0, 0, batch}, {0, 1, seq}, {3, 0, batch}, {3, 1, seq}}});
  ASSERT_TRUE(fn.ok());
  const HostTensor w = HostTensor::Random({8, 16}, 3), b = HostTensor::Random({8}, 4);
  int calls = 0;
  for (int64_t bs : {1, 2, 3}) {
    for (int64_t s : {1, 5, 6, 7, 40}) {
      SCOPED_TRACE(::testing::Message() << "batch " << bs << " seq " << s);
      ExpectMatchesReference(**fn, trace,
                             {HostTensor::Random({bs, s, 16}, bs * 100 + s), w, b,
                              HostTensor::Random({bs, s, 8}, s)},
                             ops::OpTolerance(ir::OpKind::kMatMul, 16));
      ++calls;
    }
  }
  // batch: {1, [2,3]}; seq: {1, [4,7], [32,63]} -> 2 x 3 classes.
  EXPECT_EQ((*fn)->stats().calls, calls);
  EXPECT_EQ((*fn)->stats().compiles, 6);
  EXPECT_EQ((*fn)->stats().traces, 1);
}

TEST(ShapeClasses, AutomaticDynamicAfterSecondValue) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  TraceFn trace = [](std::span<const Value> v) { return std::vector<Value>{pto::tanh(v[0]) + v[1]}; };
  auto fn = rt->JitTraced("auto", 2, trace, {});
  ASSERT_TRUE(fn.ok());
  auto run = [&](int64_t n) {
    ExpectMatchesReference(**fn, trace, {HostTensor::Random({n, 8}, n), HostTensor::Random({n, 8}, n + 1)},
                           ops::OpTolerance(ir::OpKind::kTanh, 1));
  };
  run(4);  // specialized on 4
  EXPECT_EQ((*fn)->stats().compiles, 1);
  run(6);  // the dim (shared by both inputs) becomes symbolic: bucket [4, 7]
  EXPECT_EQ((*fn)->stats().compiles, 2);
  EXPECT_EQ((*fn)->stats().traces, 2);
  run(5);  // same bucket
  run(4);  // still the static specialization
  EXPECT_EQ((*fn)->stats().compiles, 2);
  run(9);  // a new bucket of the symbolic variant, no retrace
  EXPECT_EQ((*fn)->stats().compiles, 3);
  EXPECT_EQ((*fn)->stats().traces, 2);
}

// Past the cap, the generic class (tests/jit/e2e/generic_class_test.cc has more).
TEST(ShapeClasses, RecompileCap) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("capped", [](Value x) { return x + 1.0f; },
                    {.dynamic = {{0, 0, Dim("n", 1, 1 << 20)}}, .max_shape_classes = 2});
  ASSERT_TRUE(fn.ok());
  std::vector<float> a(64), out(64);
  auto call = [&](int64_t n) {
    return (**fn)({TensorView::Dense(a.data(), {n})}, {TensorView::Dense(out.data(), {n})});
  };
  ASSERT_TRUE(call(1).ok());
  ASSERT_TRUE(call(3).ok());
  EXPECT_EQ((*fn)->stats().generic_classes, 0);
  for (int64_t n : {33, 2, 64, 5}) {
    SCOPED_TRACE(n);
    std::fill(out.begin(), out.end(), 0.0f);
    for (int64_t i = 0; i < n; ++i) a[i] = static_cast<float>(i);
    ASSERT_TRUE(call(n).ok());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<float>(i) + 1) << i;
  }
  EXPECT_EQ((*fn)->stats().compiles, 3);
  EXPECT_EQ((*fn)->stats().shape_classes, 3);
  EXPECT_EQ((*fn)->stats().generic_classes, 1);
}

TEST(ShapeClasses, PrecompileThenNoCompileAtCall) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("pre", [](Value x) { return softmax(x); }, {.dynamic = {{0, 0, Dim("rows", 1, 1024)}}});
  ASSERT_TRUE(fn.ok());
  ASSERT_TRUE((*fn)->Precompile({{{33, 33}}}).ok());
  EXPECT_EQ((*fn)->stats().compiles, 1);
  std::vector<float> a(50 * 33, 0.5f), out(50 * 33);
  ASSERT_TRUE((**fn)({TensorView::Dense(a.data(), {50, 33})}, {TensorView::Dense(out.data(), {50, 33})}).ok());
  EXPECT_EQ((*fn)->stats().compiles, 1);
  EXPECT_NEAR(out[0], 1.0f / 33, 1e-6);
}

TEST(ConstantInputs, ReadOnceUntilInvalidated) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("scale", [](Value x, Value w) { return x * w; }, {.constant_inputs = {1}});
  ASSERT_TRUE(fn.ok());
  std::vector<float> x(4, 1.0f), w(4, 2.0f), out(4);
  auto call = [&] {
    return (**fn)({TensorView::Dense(x.data(), {4}), TensorView::Dense(w.data(), {4})},
                  {TensorView::Dense(out.data(), {4})});
  };
  ASSERT_TRUE(call().ok());
  EXPECT_EQ(out[0], 2.0f);
  w.assign(4, 3.0f);  // ignored: the constant was read at the first call
  ASSERT_TRUE(call().ok());
  EXPECT_EQ(out[0], 2.0f);
  (*fn)->InvalidateConstants();
  ASSERT_TRUE(call().ok());
  EXPECT_EQ(out[0], 3.0f);
}

}  // namespace
}  // namespace pto
