// Function::Bind and BoundCall: a bound call on data pointers computes what a call with views
// computes, refuses what a call would refuse with the same message, follows constant inputs
// and in-place outputs, and runs from several threads at once.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ::testing::HasSubstr;

std::vector<float> Ramp(int64_t n, float scale) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7) % 13 - 6);
  return v;
}

std::unique_ptr<Function> Affine(Runtime& rt, FunctionOptions options = {}) {
  auto fn = rt.Jit(
      "affine", [](Value x, Value w) { return matmul(x, w) + 1.0f; }, options);
  return fn.ok() ? *std::move(fn) : nullptr;
}

constexpr int64_t kM = 23, kK = 29, kN = 31;

struct Operands {
  std::vector<float> x = Ramp(kM * kK, 0.25f), w = Ramp(kK * kN, 0.5f);
  std::vector<float> y = std::vector<float>(kM * kN, -1.0f);
  TensorView in[2] = {TensorView::Dense(x.data(), {kM, kK}), TensorView::Dense(w.data(), {kK, kN})};
  TensorView out[1] = {TensorView::Dense(y.data(), {kM, kN})};
};

TEST(BoundCallTest, ComputesWhatACallWithViewsComputes) {
  auto rt = testing::OpenRuntime();
  ASSERT_NE(rt, nullptr);
  auto fn = Affine(*rt);
  ASSERT_NE(fn, nullptr);
  Operands a;
  absl::StatusOr<BoundCall> bound = fn->Bind(a.in, a.out);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_TRUE(bound->bound());
  EXPECT_EQ(fn->stats().calls, 0);  // binding runs nothing
  for (int round = 0; round < 3; ++round) {
    // Fresh buffers each round: the bound call takes whatever pointers it is given.
    Operands b;
    b.x = Ramp(kM * kK, 0.1f * static_cast<float>(round + 1));
    b.in[0].data = b.x.data();
    ASSERT_TRUE(fn->Call({b.in[0], b.in[1]}, {b.out[0]}).ok());
    std::vector<float> y_bound(kM * kN, -2.0f);
    ASSERT_TRUE(bound->Call({b.x.data(), b.w.data()}, {y_bound.data()}).ok());
    EXPECT_EQ(std::memcmp(y_bound.data(), b.y.data(), b.y.size() * sizeof(float)), 0)
        << "round " << round;
  }
  EXPECT_EQ(fn->stats().calls, 6);
  EXPECT_EQ(fn->stats().compiles, 1);
  // A copy shares the binding.
  const BoundCall copy = *bound;
  std::vector<float> y(kM * kN);
  EXPECT_TRUE(copy.Call({a.x.data(), a.w.data()}, {y.data()}).ok());
}

TEST(BoundCallTest, BindRefusesWhatACallRefuses) {
  auto rt = testing::OpenRuntime();
  auto fn = Affine(*rt);
  ASSERT_NE(fn, nullptr);
  Operands a;
  TensorView wrong_k = TensorView::Dense(a.w.data(), {kK + 1, kN});
  const absl::Status call = fn->Call({a.in[0], wrong_k}, {a.out[0]});
  const absl::Status bind = fn->Bind({a.in[0], wrong_k}, a.out).status();
  EXPECT_EQ(bind.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bind, call);
  TensorView wrong_out = TensorView::Dense(a.y.data(), {kM, kN - 1});
  EXPECT_EQ(fn->Bind(a.in, {&wrong_out, 1}).status(), fn->Call({a.in[0], a.in[1]}, {wrong_out}));
  TensorView overlapping = TensorView::Dense(a.x.data(), {kM, kN});
  const absl::Status overlap = fn->Bind(a.in, {&overlapping, 1}).status();
  EXPECT_THAT(overlap.message(), HasSubstr("output 0 overlaps input 0"));
}

TEST(BoundCallTest, PointerAndCountErrorsAreACallsErrors) {
  auto rt = testing::OpenRuntime();
  auto fn = Affine(*rt);
  ASSERT_NE(fn, nullptr);
  Operands a;
  absl::StatusOr<BoundCall> bound = fn->Bind(a.in, a.out);
  ASSERT_TRUE(bound.ok()) << bound.status();
  // Each error against the one a call with views of the same pointers gives.
  const auto expect_as_call = [&](const void* x, const void* w, void* y, const char* says) {
    const absl::Status got = bound->Call({x, w}, {y});
    TensorView in[2] = {a.in[0], a.in[1]};
    TensorView out = a.out[0];
    in[0].data = const_cast<void*>(x);
    in[1].data = const_cast<void*>(w);
    out.data = y;
    const absl::Status want = fn->Call({in[0], in[1]}, {out});
    EXPECT_EQ(got.code(), absl::StatusCode::kInvalidArgument) << says;
    EXPECT_THAT(got.message(), HasSubstr(says));
    EXPECT_EQ(got, want) << says;
  };
  expect_as_call(nullptr, a.w.data(), a.y.data(), "input 0: data pointer is null");
  expect_as_call(a.x.data(), a.w.data(), nullptr, "output 0: data pointer is null");
  expect_as_call(reinterpret_cast<const char*>(a.w.data()) + 2, a.w.data(), a.y.data(),
                 "input 0: data pointer is not aligned to 4 bytes");
  expect_as_call(a.x.data(), a.w.data(), a.w.data() + 3, "output 0 overlaps input 1");
  const absl::Status count = bound->Call({a.x.data()}, {a.y.data()});
  EXPECT_EQ(count.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(count.message(), HasSubstr("bound call of function 'affine' takes 2 inputs and 1 "
                                         "outputs, got 1 and 1"));
  // The errors ran nothing: a valid call after them still computes the right values.
  std::vector<float> y(kM * kN, -3.0f);
  ASSERT_TRUE(bound->Call({a.x.data(), a.w.data()}, {y.data()}).ok());
  ASSERT_TRUE(fn->Call({a.in[0], a.in[1]}, {a.out[0]}).ok());
  EXPECT_EQ(y, a.y);
}

TEST(BoundCallTest, AnUnboundCallIsAFailedPrecondition) {
  const BoundCall unbound;
  EXPECT_FALSE(unbound.bound());
  float x = 0;
  const absl::Status s = unbound.Call({&x}, {&x});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("unbound BoundCall"));
}

TEST(BoundCallTest, ACallAfterItsFunctionIsDestroyedIsAFailedPrecondition) {
  auto rt = testing::OpenRuntime();
  auto fn = Affine(*rt);
  ASSERT_NE(fn, nullptr);
  Operands a;
  absl::StatusOr<BoundCall> bound = fn->Bind(a.in, a.out);
  ASSERT_TRUE(bound.ok());
  ASSERT_TRUE(bound->Call({a.x.data(), a.w.data()}, {a.y.data()}).ok());
  fn.reset();
  const absl::Status s = bound->Call({a.x.data(), a.w.data()}, {a.y.data()});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("BoundCall of function 'affine', which was destroyed"));
}

TEST(BoundCallTest, ConstantInputsAreReadAgainAfterInvalidation) {
  auto rt = testing::OpenRuntime();
  FunctionOptions options;
  options.constant_inputs = {1};
  auto fn = Affine(*rt, options);
  ASSERT_NE(fn, nullptr);
  Operands a;
  absl::StatusOr<BoundCall> bound = fn->Bind(a.in, a.out);
  ASSERT_TRUE(bound.ok()) << bound.status();
  const auto bound_result = [&](const std::vector<float>& w) {
    std::vector<float> y(kM * kN);
    EXPECT_TRUE(bound->Call({a.x.data(), w.data()}, {y.data()}).ok());
    return y;
  };
  const auto view_result = [&](std::vector<float>& w) {
    std::vector<float> y(kM * kN);
    EXPECT_TRUE(fn->Call({a.in[0], TensorView::Dense(w.data(), {kK, kN})},
                         {TensorView::Dense(y.data(), {kM, kN})})
                    .ok());
    return y;
  };
  std::vector<float> w1 = a.w, w2 = Ramp(kK * kN, -0.75f);
  const std::vector<float> first = bound_result(w1);
  EXPECT_EQ(first, view_result(w1));
  // Without invalidation the constant copy stays the first one's.
  EXPECT_EQ(bound_result(w2), first);
  fn->InvalidateConstants();
  const std::vector<float> second = bound_result(w2);
  EXPECT_NE(second, first);
  EXPECT_EQ(second, view_result(w2));
}

TEST(BoundCallTest, AnOutputDeclaredInPlaceMayBeItsInput) {
  auto rt = testing::OpenRuntime();
  FunctionOptions options;
  options.in_place_outputs = {{.output = 0, .input = 0}};
  auto fn = rt->Jit(
      "scale", [](Value x) { return x * 3.0f; }, options);
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::vector<float> x = Ramp(40, 1.0f);
  const std::vector<float> x0 = x;
  const TensorView view = TensorView::Dense(x.data(), {40});
  absl::StatusOr<BoundCall> bound = (*fn)->Bind({&view, 1}, {&view, 1});
  ASSERT_TRUE(bound.ok()) << bound.status();
  ASSERT_TRUE(bound->Call({x.data()}, {x.data()}).ok());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i], 3.0f * x0[i]);
  // Partly overlapping its input is still refused.
  const absl::Status shifted = bound->Call({x.data()}, {x.data() + 1});
  EXPECT_THAT(shifted.message(), HasSubstr("output 0 overlaps input 0"));
}

TEST(BoundCallTest, ThreadsShareOneBinding) {
  auto rt = testing::OpenRuntime();
  auto fn = Affine(*rt);
  ASSERT_NE(fn, nullptr);
  Operands a;
  ASSERT_TRUE(fn->Call({a.in[0], a.in[1]}, {a.out[0]}).ok());
  absl::StatusOr<BoundCall> bound = fn->Bind(a.in, a.out);
  ASSERT_TRUE(bound.ok());
  constexpr int kThreads = 3, kCalls = 200;
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> y(kM * kN);
      for (int c = 0; c < kCalls; ++c) {
        std::fill(y.begin(), y.end(), 0.0f);
        if (!bound->Call({a.x.data(), a.w.data()}, {y.data()}).ok() || y != a.y) ++wrong[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong, std::vector<int>(kThreads, 0));
  EXPECT_EQ(fn->stats().calls, 1 + kThreads * kCalls);
}

// y = x w + 1 in doubles, for results of plans whose configs (and so summation order) differ.
std::vector<double> AffineReference(const Operands& o) {
  std::vector<double> y(kM * kN, 1.0);
  for (int64_t m = 0; m < kM; ++m) {
    for (int64_t n = 0; n < kN; ++n) {
      for (int64_t k = 0; k < kK; ++k) y[m * kN + n] += double{o.x[m * kK + k]} * o.w[k * kN + n];
    }
  }
  return y;
}

// A bound call launches from its own copy of the plan's launch; when tuning swaps a plan in, the
// calls go on with the new one: right values while the swaps happen (two threads, bound before
// tuning started), and after them the same values as a call with views, which runs the class's
// current plan. Each swap retires a plan whose code a stale copy would run.
TEST(BoundCallTest, BoundCallsFollowThePlansTuningSwapsIn) {
  RuntimeOptions options;
  options.tuning.mode = TuningMode::kBackground;
  options.tuning.trials_per_kernel = 4;
  options.tuning.seed = 5;
  options.tuning.min_improvement = -100;  // every verified candidate wins: every trial swaps
  auto rt = testing::OpenRuntime(options);
  std::unique_ptr<Function> fn = Affine(*rt);
  ASSERT_NE(fn, nullptr);
  Operands o;
  const std::vector<double> want = AffineReference(o);
  ASSERT_TRUE((*fn)(o.in, o.out).ok());  // compiles the class and queues its tuning
  absl::StatusOr<BoundCall> bound = fn->Bind(o.in, o.out);
  ASSERT_TRUE(bound.ok()) << bound.status();
  std::atomic<bool> done{false};
  std::atomic<int64_t> calls{0}, wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      std::vector<float> y(kM * kN);
      while (!done.load()) {
        if (!bound->Call({o.x.data(), o.w.data()}, {y.data()}).ok()) failed.fetch_add(1);
        for (int64_t i = 0; i < kM * kN; ++i) {
          if (std::abs(y[i] - want[i]) > 1e-4 * (1 + std::abs(want[i]))) {
            wrong.fetch_add(1);
            break;
          }
        }
        calls.fetch_add(1);
        // Background tuning waits while calls run: leave it time.
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  ASSERT_TRUE(rt->WaitForTuning().ok());
  done.store(true);
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(calls.load(), 2);
  EXPECT_GE(fn->stats().plans_swapped, 1);

  std::vector<float> bound_y(kM * kN, -1.0f);
  ASSERT_TRUE(bound->Call({o.x.data(), o.w.data()}, {bound_y.data()}).ok());
  ASSERT_TRUE((*fn)(o.in, o.out).ok());
  EXPECT_EQ(std::memcmp(bound_y.data(), o.y.data(), bound_y.size() * sizeof(float)), 0);
}

TEST(BoundCallTest, ALambdaCallingABoundCallIsRefused) {
  auto rt = testing::OpenRuntime();
  auto helper = Affine(*rt);
  ASSERT_NE(helper, nullptr);
  Operands a;
  absl::StatusOr<BoundCall> bound = helper->Bind(a.in, a.out);
  ASSERT_TRUE(bound.ok());
  absl::Status nested;
  auto outer = rt->Jit("outer", [&](Value x) {
    std::vector<float> y(kM * kN);
    nested = bound->Call({a.x.data(), a.w.data()}, {y.data()});
    return x * 2.0f;
  });
  ASSERT_TRUE(outer.ok());
  std::vector<float> x(4, 1.0f), y(4);
  const absl::Status traced =
      (*outer)->Call({TensorView::Dense(x.data(), {4})}, {TensorView::Dense(y.data(), {4})});
  EXPECT_EQ(nested.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(nested.message(),
              HasSubstr("function 'affine' was called from inside the traced lambda of 'outer'"));
  // The trace fails with it, as for a call with views.
  EXPECT_EQ(traced, nested);
}

}  // namespace
}  // namespace pto
