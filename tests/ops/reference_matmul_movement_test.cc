// Reference matmul and data-movement ops against hand-computed values.
#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/graph.h"
#include "ops/reference.h"
#include "reference_test_util.h"

namespace pto::ops {
namespace {

using ir::OpKind;
using testing::AxisAttrs;
using testing::Eval;
using testing::ExpectTensor;
using testing::T;

constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

ir::Attrs MatMulAttrs(bool ta, bool tb) {
  ir::Attrs a;
  a.transpose_a = ta;
  a.transpose_b = tb;
  return a;
}

// [[1, 2, 3], [4, 5, 6]] x [[1, 0], [0, 1], [1, 1]] = [[4, 5], [10, 11]].
const std::vector<float> kA = {1, 2, 3, 4, 5, 6};
const std::vector<float> kAT = {1, 4, 2, 5, 3, 6};  // kA transposed, [3, 2]
const std::vector<float> kB = {1, 0, 0, 1, 1, 1};
const std::vector<float> kBT = {1, 0, 1, 0, 1, 1};  // kB transposed, [2, 3]

TEST(ReferenceMatMulTest, PlainAndTransposed) {
  const std::vector<double> want = {4, 5, 10, 11};
  ExpectTensor(Eval(OpKind::kMatMul, {}, {T({2, 3}, kA), T({3, 2}, kB)}), {2, 2}, want);
  ExpectTensor(Eval(OpKind::kMatMul, MatMulAttrs(true, false), {T({3, 2}, kAT), T({3, 2}, kB)}),
               {2, 2}, want);
  ExpectTensor(Eval(OpKind::kMatMul, MatMulAttrs(false, true), {T({2, 3}, kA), T({2, 3}, kBT)}),
               {2, 2}, want);
  ExpectTensor(Eval(OpKind::kMatMul, MatMulAttrs(true, true), {T({3, 2}, kAT), T({2, 3}, kBT)}),
               {2, 2}, want);
}

TEST(ReferenceMatMulTest, BatchBroadcast) {
  // a: [2, 2, 3] (batch 0 = kA, batch 1 = -kA); b: [3, 2] shared.
  std::vector<float> a2 = kA;
  for (float v : kA) a2.push_back(-v);
  ExpectTensor(Eval(OpKind::kMatMul, {}, {T({2, 2, 3}, a2), T({3, 2}, kB)}), {2, 2, 2},
               {4, 5, 10, 11, -4, -5, -10, -11});
  // a: [2, 1, 2, 3] against b: [3, 3, 2] (batch [2, 1] x [3] -> [2, 3]); b's batches scale.
  std::vector<float> b3;
  for (int s = 1; s <= 3; ++s)
    for (float v : kB) b3.push_back(s * v);
  absl::StatusOr<HostTensor> r = Eval(OpKind::kMatMul, {}, {T({2, 1, 2, 3}, a2), T({3, 3, 2}, b3)});
  std::vector<double> want;
  for (int sign : {1, -1})
    for (int s = 1; s <= 3; ++s)
      for (double v : {4, 5, 10, 11}) want.push_back(sign * s * v);
  ExpectTensor(r, {2, 3, 2, 2}, want);
}

TEST(ReferenceMatMulTest, SizeZeroAndOne) {
  // K = 0: zeros.
  ExpectTensor(Eval(OpKind::kMatMul, {}, {T({2, 0}, {}), T({0, 3}, {})}), {2, 3},
               {0, 0, 0, 0, 0, 0});
  ExpectTensor(Eval(OpKind::kMatMul, {}, {T({0, 3}, {}), T({3, 2}, kB)}), {0, 2}, {});
  ExpectTensor(Eval(OpKind::kMatMul, {}, {T({0, 2, 3}, {}), T({3, 2}, kB)}), {0, 2, 2}, {});
  ExpectTensor(Eval(OpKind::kMatMul, {}, {T({1, 1}, {3}), T({1, 1}, {-2})}), {1, 1}, {-6});
  // Matrix-vector: N = 1.
  ExpectTensor(Eval(OpKind::kMatMul, {}, {T({2, 3}, kA), T({3, 1}, {1, 1, 1})}), {2, 1}, {6, 15});
}

TEST(ReferenceMovementTest, Transpose) {
  ir::Attrs perm;
  perm.ints = {1, 0};
  ExpectTensor(Eval(OpKind::kTranspose, perm, {T({2, 3}, kA)}), {3, 2}, {1, 4, 2, 5, 3, 6});
  // [2, 3, 2] with perm [2, 0, 1]: out[k][i][j] = x[i][j][k].
  std::vector<float> x;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) x.push_back(100 * i + 10 * j + k);
  perm.ints = {2, 0, 1};
  ExpectTensor(Eval(OpKind::kTranspose, perm, {T({2, 3, 2}, x)}), {2, 2, 3},
               {0, 10, 20, 100, 110, 120, 1, 11, 21, 101, 111, 121});
  perm.ints = {1, 0};
  ExpectTensor(Eval(OpKind::kTranspose, perm, {T({0, 3}, {})}), {3, 0}, {});
  ExpectTensor(Eval(OpKind::kTranspose, perm, {T({1, 3}, {1, 2, 3})}), {3, 1}, {1, 2, 3});
}

TEST(ReferenceMovementTest, Reshape) {
  ir::Attrs spec;
  spec.ints = {-1, 2};
  ExpectTensor(Eval(OpKind::kReshape, spec, {T({2, 3}, kA)}), {3, 2}, {1, 2, 3, 4, 5, 6});
  spec.ints = {0, 1, -1};
  ExpectTensor(Eval(OpKind::kReshape, spec, {T({2, 3}, kA)}), {2, 1, 3}, {1, 2, 3, 4, 5, 6});
  spec.ints = {};
  ExpectTensor(Eval(OpKind::kReshape, spec, {T({1, 1}, {9})}), {}, {9});
  spec.ints = {0, 5};
  ExpectTensor(Eval(OpKind::kReshape, spec, {T({0, 5}, {})}), {0, 5}, {});
}

TEST(ReferenceMovementTest, Concat) {
  ExpectTensor(Eval(OpKind::kConcat, AxisAttrs(1),
                    {T({2, 1}, {1, 2}), T({2, 2}, {3, 4, 5, 6}), T({2, 0}, {})}),
               {2, 3}, {1, 3, 4, 2, 5, 6});
  ExpectTensor(Eval(OpKind::kConcat, AxisAttrs(-2), {T({1, 2}, {1, 2}), T({2, 2}, {3, 4, 5, 6})}),
               {3, 2}, {1, 2, 3, 4, 5, 6});
  ExpectTensor(Eval(OpKind::kConcat, AxisAttrs(0), {T({3}, {1, 2, 3})}), {3}, {1, 2, 3});
  ExpectTensor(Eval(OpKind::kConcat, AxisAttrs(1), {T({0, 2}, {}), T({0, 1}, {})}), {0, 3}, {});
}

TEST(ReferenceMovementTest, Slice) {
  ir::Attrs s;
  s.axis = 1;
  s.start = 1;
  s.end = kToEnd;
  s.step = 1;
  ExpectTensor(Eval(OpKind::kSlice, s, {T({2, 3}, kA)}), {2, 2}, {2, 3, 5, 6});
  s.axis = -1;
  s.start = 0;
  s.step = 2;
  ExpectTensor(Eval(OpKind::kSlice, s, {T({2, 3}, kA)}), {2, 2}, {1, 3, 4, 6});
  s.axis = 0;
  s.start = -1;
  s.step = 1;
  ExpectTensor(Eval(OpKind::kSlice, s, {T({2, 3}, kA)}), {1, 3}, {4, 5, 6});
  s.start = 5;  // clamped: empty
  ExpectTensor(Eval(OpKind::kSlice, s, {T({2, 3}, kA)}), {0, 3}, {});
  s.axis = 0;
  s.start = 1;
  s.end = 6;
  s.step = 2;
  ExpectTensor(Eval(OpKind::kSlice, s, {T({7}, {0, 1, 2, 3, 4, 5, 6})}), {3}, {1, 3, 5});
}

// numpy's semantics, element by element: np.arange(n)[start:end:step].
TEST(ReferenceMovementTest, SliceFollowsNumpy) {
  auto arange = [](int64_t n) {
    std::vector<float> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(i));
    return T({n}, v);
  };
  struct Case {
    int64_t n, start, end, step;
    std::vector<double> want;
  };
  const std::vector<Case> cases = {
      {3, 0, 1000, 1, {0, 1, 2}},    // end past the size
      {3, 1, 100000000, 1, {1, 2}},  // far past
      {3, 2, 40, 7, {2}},            // np.arange(3)[2:40:7]
      {10, 2, 40, 7, {2, 9}},
      {3, -2, kToEnd, 1, {1, 2}},  // negative start counts from the end
      {3, 0, -1, 1, {0, 1}},       // negative end too
      {4, -5, -1, 2, {0, 2}},      // start clamps to 0
      {6, -5, -1, 2, {1, 3}},
      {8, -5, 3, 1, {}},      // start 3, end 3
      {3, 5, 10, 1, {}},      // past the end: empty
      {3, 2, 1, 1, {}},       // end before start: empty
      {0, 0, kToEnd, 1, {}},  // an empty dim
      {5, std::numeric_limits<int64_t>::min(), kToEnd, 3, {0, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "arange(" << c.n << ")[" << c.start << ":" << c.end << ":" << c.step << "]");
    ir::Attrs s;
    s.start = c.start;
    s.end = c.end;
    s.step = c.step;
    ExpectTensor(Eval(OpKind::kSlice, s, {arange(c.n)}), {static_cast<int64_t>(c.want.size())},
                 c.want);
  }
  for (int64_t step : {0, -1}) {
    ir::Attrs s;
    s.end = 2;
    s.step = step;
    absl::StatusOr<HostTensor> r = Eval(OpKind::kSlice, s, {arange(3)});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("step must be >= 1"));
  }
}

}  // namespace
}  // namespace pto::ops
