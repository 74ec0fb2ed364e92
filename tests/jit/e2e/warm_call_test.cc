// Warm calls that reuse a remembered call's checks (jit/call_memo.h) compute what a cold call
// computes: shapes alternating within one Function and across shape classes, more Functions on
// one thread than it remembers, several threads on one Function, and pointers that change
// between calls with the same shapes.
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ::testing::HasSubstr;

// y = x . w + bias, computed on the host.
std::vector<float> Affine(const std::vector<float>& x, const std::vector<float>& w, int64_t m,
                          int64_t k, int64_t n, float bias) {
  std::vector<float> y(m * n, bias);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j) y[i * n + j] += x[i * k + p] * w[p * n + j];
    }
  }
  return y;
}

std::vector<float> Ramp(int64_t n, float scale) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7) % 13 - 6);
  return v;
}

std::unique_ptr<Function> AffineFunction(Runtime& rt, float bias, bool dynamic) {
  FunctionOptions options;
  if (dynamic) options.dynamic = {{0, 0, Dim("rows", 1, 64)}};
  auto fn = rt.Jit(
      "affine", [bias](Value x, Value w) { return matmul(x, w) + bias; }, options);
  return fn.ok() ? *std::move(fn) : nullptr;
}

// Calls `fn` on fresh buffers of [m, k] x [k, n] and compares with the host.
void ExpectAffine(Function& fn, int64_t m, int64_t k, int64_t n, float bias, float scale) {
  const std::vector<float> x = Ramp(m * k, scale), w = Ramp(k * n, 0.5f);
  std::vector<float> y(m * n, -1.0f);
  const TensorView in[] = {TensorView::Dense(x.data(), {m, k}),
                           TensorView::Dense(w.data(), {k, n})};
  const TensorView out[] = {TensorView::Dense(y.data(), {m, n})};
  ASSERT_TRUE(fn(in, out).ok());
  EXPECT_THAT(y, ::testing::Pointwise(::testing::FloatNear(1e-4f), Affine(x, w, m, k, n, bias)))
      << m << "x" << k << "x" << n;
}

TEST(WarmCallTest, ShapesAlternatingWithinAndAcrossClassesGiveTheirOwnResults) {
  auto rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  auto fn = AffineFunction(*rt, 1.0f, /*dynamic=*/true);
  ASSERT_NE(fn, nullptr);
  for (int round = 0; round < 3; ++round) {
    for (int64_t rows : {4, 7, 4, 33, 7}) {
      ExpectAffine(*fn, rows, 8, 3, 1.0f, 0.25f * static_cast<float>(round + 1));
    }
  }
  EXPECT_EQ(fn->stats().calls, 15);
}

TEST(WarmCallTest, MoreFunctionsThanAThreadRemembersEachStayRight) {
  auto rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  std::vector<std::unique_ptr<Function>> fns;
  for (int i = 0; i < 11; ++i) {
    fns.push_back(AffineFunction(*rt, static_cast<float>(i), /*dynamic=*/false));
    ASSERT_NE(fns.back(), nullptr);
  }
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < fns.size(); ++i) {
      ExpectAffine(*fns[i], 5, 6, 4, static_cast<float>(i), 1.0f + static_cast<float>(round));
    }
  }
  // A Function made after one is gone (perhaps at its address) does not take its calls' record.
  fns[3].reset();
  fns[3] = AffineFunction(*rt, 100.0f, /*dynamic=*/false);
  ASSERT_NE(fns[3], nullptr);
  ExpectAffine(*fns[3], 5, 6, 4, 100.0f, 1.0f);
}

TEST(WarmCallTest, ThreadsCallingOneFunctionWithTheirOwnShapes) {
  auto rt = testing::OpenRuntime({.intra_op_threads = 1});
  ASSERT_NE(rt, nullptr);
  auto fn = AffineFunction(*rt, 2.0f, /*dynamic=*/true);
  ASSERT_NE(fn, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&fn, t] {
      for (int i = 0; i < 40; ++i) ExpectAffine(*fn, 3 + 5 * t + i % 2, 8, 5, 2.0f, 0.5f);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(fn->stats().calls, 120);
}

TEST(WarmCallTest, OutputsOverlappingEachOtherAfterValidCallsAreRejected) {
  auto rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  auto fn = rt->JitTraced("two", 1,
                          [](std::span<const Value> v) {
                            return std::vector<Value>{v[0] + 1.0f, v[0] * 2.0f};
                          },
                          {});
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::vector<float> x(8, 3.0f), ys(16);
  const TensorView in[] = {TensorView::Dense(x.data(), {2, 4})};
  const TensorView apart[] = {TensorView::Dense(ys.data(), {2, 4}),
                              TensorView::Dense(ys.data() + 8, {2, 4})};
  ASSERT_TRUE((**fn)(in, apart).ok());
  ASSERT_TRUE((**fn)(in, apart).ok());
  EXPECT_EQ(ys[0], 4.0f);
  EXPECT_EQ(ys[8], 6.0f);
  const TensorView overlapping[] = {TensorView::Dense(ys.data(), {2, 4}),
                                    TensorView::Dense(ys.data() + 4, {2, 4})};
  const absl::Status s = (**fn)(in, overlapping);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("output 1 overlaps output 0"));
  ASSERT_TRUE((**fn)(in, apart).ok());
}

}  // namespace
}  // namespace pto
