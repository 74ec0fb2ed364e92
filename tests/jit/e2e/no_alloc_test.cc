// A second call with the same shape class does no tracing, no compiling and no heap
// allocation: every operator new in this binary is counted.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <vector>

#include "device/thread_arena.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace {
std::atomic<int64_t> allocations{0};
}  // namespace

// The replacements below pair malloc with free; GCC cannot see that and warns under ASan.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
// Every form is replaced, so that all news and deletes in the process pair up (LLVM uses the
// nothrow and aligned forms).
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void* operator new(size_t n, std::align_val_t a) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  const size_t align = static_cast<size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace pto {
namespace {

// Pinning the caller for a call of a pinning arena (and giving its affinity back) allocates
// nothing: a multi-threaded call's hot path holds one.
TEST(HotPath, PinningTheCallerAllocatesNothing) {
  device::ThreadArena arena(2, /*pin=*/true);
  const int64_t before = allocations.load();
  bool pinned = false;
  {
    device::ThreadArena::CallerPin pin(&arena);
    pinned = pin.pinned();
  }
  EXPECT_EQ(allocations.load() - before, 0);
  EXPECT_EQ(pinned, arena.pins());
}

TEST(HotPath, WarmCallAllocatesNothing) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime({.intra_op_threads = 1});
  auto fn = rt->Jit("block",
                    [](Value x, Value w, Value b, Value g) {
                      Value h = layer_norm(x, g, b);
                      return softmax(matmul(h, w, {.transpose_b = true})) + 1.0f;
                    },
                    {.dynamic = {{0, 0, Dim("rows", 1, 512)}}});
  ASSERT_TRUE(fn.ok());
  std::vector<float> x(37 * 24, 0.25f), w(40 * 24, 0.5f), b(24, 0.0f), g(24, 1.0f), out(37 * 40);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.1f;
  std::vector<TensorView> in = {
      TensorView::Dense(x.data(), {37, 24}), TensorView::Dense(w.data(), {40, 24}),
      TensorView::Dense(b.data(), {24}), TensorView::Dense(g.data(), {24})};
  std::vector<TensorView> outs = {TensorView::Dense(out.data(), {37, 40})};
  ASSERT_TRUE((**fn)(in, outs).ok());
  const FunctionStats before = (*fn)->stats();
  const int64_t allocs_before = allocations.load();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE((**fn)(in, outs).ok());
  EXPECT_EQ(allocations.load() - allocs_before, 0);
  EXPECT_EQ((*fn)->stats().traces, before.traces);
  EXPECT_EQ((*fn)->stats().compiles, before.compiles);
  EXPECT_EQ((*fn)->stats().calls, before.calls + 100);
}

// Outputs written in place of inputs (an SGD step), and one copied over its input after the
// input's last reader (the copy fallback): warm calls allocate nothing either.
TEST(HotPath, WarmInPlaceCallsAllocateNothing) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime({.intra_op_threads = 1});
  FunctionOptions donate;
  donate.in_place_outputs = {{.output = 0, .input = 0}};
  auto sgd = rt->Jit(
      "sgd", [](Value p, Value g) { return p - g * 0.5f; }, donate);
  auto fallback = rt->Jit(
      "fallback",
      [](Value p, Value w) {
        return std::pair{p + 1.0f, matmul(p, w)};
      },
      donate);
  ASSERT_TRUE(sgd.ok() && fallback.ok());
  std::vector<float> p(16 * 24, 0.5f), g(16 * 24, 0.25f), w(24 * 8, 0.125f), mm(16 * 8);
  const TensorView pv = TensorView::Dense(p.data(), {16, 24});
  const std::vector<TensorView> sgd_in = {pv, TensorView::Dense(g.data(), {16, 24})};
  const std::vector<TensorView> fb_in = {pv, TensorView::Dense(w.data(), {24, 8})};
  const std::vector<TensorView> sgd_out = {pv};
  const std::vector<TensorView> fb_out = {pv, TensorView::Dense(mm.data(), {16, 8})};
  ASSERT_TRUE((**sgd)(sgd_in, sgd_out).ok());
  ASSERT_TRUE((**fallback)(fb_in, fb_out).ok());
  const int64_t allocs_before = allocations.load();
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE((**sgd)(sgd_in, sgd_out).ok());
    ASSERT_TRUE((**fallback)(fb_in, fb_out).ok());
  }
  EXPECT_EQ(allocations.load() - allocs_before, 0);
  // 0.5 - 51 * 0.125 + 51 * 1: every step exact in f32.
  EXPECT_EQ(p[0], 45.125f);
}

// A gradient Function (JitGrad, accumulating into its accumulators in place): warm calls of a
// training step's forward and backward allocate nothing either.
TEST(HotPath, WarmGradientCallsAllocateNothing) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime({.intra_op_threads = 1});
  auto step =
      rt->JitGrad("grad",
                  [](Value x, Value w, Value b, Value y) {
                    Value err = matmul(gelu(layer_norm(x, b, b)), w) - y;
                    return reduce_mean(reduce_mean(err * err, 1), 0);
                  },
                  {.wrt = {1, 2}, .accumulate = true}, {.in_place_outputs = {{1, 4}, {2, 5}}});
  ASSERT_TRUE(step.ok()) << step.status();
  std::vector<float> x(12 * 16, 0.25f), w(16 * 8, 0.5f), b(16, 1.0f), y(12 * 8, 0.1f);
  std::vector<float> dw(16 * 8, 0.0f), db(16, 0.0f), loss(1);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 5) * 0.1f;
  const TensorView dwv = TensorView::Dense(dw.data(), {16, 8}),
                   dbv = TensorView::Dense(db.data(), {16});
  const std::vector<TensorView> in = {TensorView::Dense(x.data(), {12, 16}),
                                      TensorView::Dense(w.data(), {16, 8}),
                                      TensorView::Dense(b.data(), {16}),
                                      TensorView::Dense(y.data(), {12, 8}),
                                      dwv,
                                      dbv};
  const std::vector<TensorView> out = {TensorView::Dense(loss.data(), {}), dwv, dbv};
  ASSERT_TRUE((**step)(in, out).ok());
  const float first = dw[0];
  const int64_t allocs_before = allocations.load();
  for (int i = 0; i < 50; ++i) ASSERT_TRUE((**step)(in, out).ok());
  EXPECT_EQ(allocations.load() - allocs_before, 0);
  EXPECT_NE(first, 0.0f);
  // Each call adds the same gradient: 51 f32 additions round by at most 51 half-ulps.
  EXPECT_NEAR(dw[0], 51 * first, 51 * 6e-8 * std::fabs(51 * first));
}

// A warm training step (forward, backward, AdamW with clipping; parameters and state updated in
// place) allocates nothing.
TEST(HotPath, WarmTrainStepsAllocateNothing) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime({.intra_op_threads = 1});
  std::vector<float> w(16 * 8, 0.05f), b(8, 0.0f), x(12 * 16), y(12 * 8, 0.1f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) * 0.1f;
  const TensorView init[2] = {TensorView::Dense(w.data(), {16, 8}),
                              TensorView::Dense(b.data(), {8})};
  auto step = rt->JitTrainStep(
      "train",
      [](Value x, Value w, Value b, Value y) {
        Value err = gelu(matmul(x, w) + b) - y;
        return reduce_mean(reduce_mean(err * err, 1), 0);
      },
      init,
      {.parameters = {1, 2},
       .optimizer = {.kind = Optimizer::Kind::kAdamW, .weight_decay = 0.01f, .max_grad_norm = 1}});
  ASSERT_TRUE(step.ok()) << step.status();
  const TensorView data[2] = {TensorView::Dense(x.data(), {12, 16}),
                              TensorView::Dense(y.data(), {12, 8})};
  absl::StatusOr<float> first = (**step)(data);
  ASSERT_TRUE(first.ok()) << first.status();
  const int64_t allocs_before = allocations.load();
  float last = 0;
  for (int i = 0; i < 50; ++i) {
    absl::StatusOr<float> loss = (**step)(data);
    ASSERT_TRUE(loss.ok());
    last = *loss;
  }
  EXPECT_EQ(allocations.load() - allocs_before, 0);
  EXPECT_LT(last, *first);
}

}  // namespace
}  // namespace pto
