// The i32 dtype end to end (views, tracing, kernels, call validation) and the ops that make or
// take integers and masks: comparisons, where, cast, iota, one_hot, i32 arithmetic; checked
// against values computed here (IEEE comparisons, wrapping two's complement, saturating casts).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/graph/graph_def.h"
#include "jit/graph/graph_hash.h"
#include "jit/trace.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Row-major index of `out_index` (of `out`) in a tensor of shape `in` broadcast to `out`.
int64_t BroadcastIndex(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                       int64_t out_index) {
  int64_t index = 0, stride = 1;
  for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
    const int64_t coord = out_index % out[d];
    out_index /= out[d];
    const int in_d = d - static_cast<int>(out.size() - in.size());
    if (in_d < 0) continue;
    if (in[in_d] != 1) index += coord * stride;
    stride *= in[in_d];
  }
  return index;
}

std::vector<float> RandomF32(int64_t n, std::mt19937& rng, float lo = -3, float hi = 3) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  // Few distinct values, so equal elements (eq, le, ge) occur.
  for (float& x : v) x = std::round(dist(rng) * 2) / 2;
  return v;
}

std::vector<int32_t> RandomI32(int64_t n, std::mt19937& rng, int32_t lo, int32_t hi) {
  std::uniform_int_distribution<int32_t> dist(lo, hi);
  std::vector<int32_t> v(n);
  for (int32_t& x : v) x = dist(rng);
  return v;
}

int32_t Wrap(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

class IntegerOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rt_ = testing::OpenRuntime();
    ASSERT_NE(rt_, nullptr);
  }

  template <typename F>
  std::unique_ptr<Function> Jit(const std::string& name, F fn, FunctionOptions options = {}) {
    absl::StatusOr<std::unique_ptr<Function>> f = rt_->Jit(name, fn, std::move(options));
    EXPECT_TRUE(f.ok()) << f.status();
    return f.ok() ? *std::move(f) : nullptr;
  }

  std::unique_ptr<Runtime> rt_;
};

TEST_F(IntegerOpsTest, ViewsAndTensorsCarryTheirDType) {
  const int32_t labels[3] = {1, 2, 3};
  const TensorView v = TensorView::Dense(labels, {3});
  EXPECT_EQ(v.dtype, DType::kI32);
  EXPECT_EQ(v.rank, 1);
  EXPECT_EQ(TensorView::Dense(static_cast<const float*>(nullptr), {2}).dtype, DType::kF32);
  const std::vector<int64_t> shape = {2, 3};
  Tensor t = Tensor::Allocate(shape, DType::kI32);
  EXPECT_EQ(t.dtype(), DType::kI32);
  EXPECT_NE(t.i32_data(), nullptr);
  EXPECT_EQ(t.data(), nullptr);
  Tensor f = Tensor::Allocate(shape);
  EXPECT_EQ(f.dtype(), DType::kF32);
  EXPECT_NE(f.data(), nullptr);
  EXPECT_EQ(f.i32_data(), nullptr);
}

// add, sub, mul wrap; max, min, neg, abs on the i32 range's edges; the allocating call returns
// i32 tensors.
TEST_F(IntegerOpsTest, I32ArithmeticWraps) {
  std::mt19937 rng(7);
  for (const auto& [sa, sb] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{3, 37}, {37}}, {{1}, {19}}, {{5, 1}, {1, 9}}, {{70}, {70}}}) {
    // A Function per case: a Function's ranks are fixed by its first call.
    auto fn = Jit("int_arith", [](Value a, Value b) {
      return std::vector<Value>{a * b + a - b, maximum(a, b), minimum(a, b), -a, abs(a), a + 1.0f};
    });
    ASSERT_NE(fn, nullptr);
    std::vector<int32_t> a = RandomI32(Count(sa), rng, kMin32, kMax32);
    std::vector<int32_t> b = RandomI32(Count(sb), rng, -100000, 100000);
    a[0] = kMin32;
    if (a.size() > 1) a[1] = kMax32;
    const TensorView in[2] = {TensorView::Dense(a.data(), sa), TensorView::Dense(b.data(), sb)};
    absl::StatusOr<std::vector<Tensor>> out = (*fn)(in);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 6u);
    for (const Tensor& t : *out) ASSERT_EQ(t.dtype(), DType::kI32);
    const std::vector<int64_t> shape((*out)[0].dims().begin(), (*out)[0].dims().end());
    for (int64_t i = 0; i < Count(shape); ++i) {
      const int64_t x = a[BroadcastIndex(sa, shape, i)], y = b[BroadcastIndex(sb, shape, i)];
      ASSERT_EQ((*out)[0].i32_data()[i], Wrap(Wrap(Wrap(x * y) + x) - y)) << i;
      ASSERT_EQ((*out)[1].i32_data()[i], std::max(x, y));
      ASSERT_EQ((*out)[2].i32_data()[i], std::min(x, y));
    }
    for (int64_t i = 0; i < Count(sa); ++i) {
      const int64_t x = a[i];
      ASSERT_EQ((*out)[3].i32_data()[i], Wrap(-x)) << i;
      ASSERT_EQ((*out)[4].i32_data()[i], Wrap(x < 0 ? -x : x)) << i;  // abs(INT_MIN) = INT_MIN
      ASSERT_EQ((*out)[5].i32_data()[i], Wrap(x + 1)) << i;
    }
  }
}

// Comparisons of f32 (NaN false but for ne) and of i32, with broadcasting: f32 1/0.
TEST_F(IntegerOpsTest, ComparisonsGiveMasks) {
  auto check = [](const std::vector<Tensor>& out, auto a, auto b, const std::vector<int64_t>& sa,
                  const std::vector<int64_t>& sb, double scalar) {
    const std::vector<int64_t> shape(out[0].dims().begin(), out[0].dims().end());
    for (int64_t i = 0; i < Count(shape); ++i) {
      const double x = a[BroadcastIndex(sa, shape, i)], y = b[BroadcastIndex(sb, shape, i)];
      const bool want[6] = {x == y, x != y, x<y, x <= y, x> y, x >= y};
      for (int k = 0; k < 6; ++k) {
        ASSERT_EQ(out[k].dtype(), DType::kF32);
        ASSERT_EQ(out[k].data()[i], want[k] ? 1.0f : 0.0f) << "op " << k << " at " << i;
      }
    }
    for (int64_t i = 0; i < Count(sa); ++i) {
      const double x = a[i];
      const bool want = scalar == 0.5 ? x < scalar : x >= scalar;
      ASSERT_EQ(out[6].data()[i], want ? 1.0f : 0.0f) << i;
    }
  };
  std::mt19937 rng(11);
  for (const auto& [sa, sb] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{4, 33}, {33}}, {{1}, {}}, {{2, 1, 17}, {3, 1}}, {{9}, {9}}}) {
    auto f32 = Jit("cmp_f32", [](Value a, Value b) {
      return std::vector<Value>{eq(a, b), ne(a, b), lt(a, b),   le(a, b),
                                gt(a, b), ge(a, b), lt(a, 0.5f)};
    });
    auto i32 = Jit("cmp_i32", [](Value a, Value b) {
      return std::vector<Value>{eq(a, b), ne(a, b), lt(a, b),   le(a, b),
                                gt(a, b), ge(a, b), ge(a, 2.0f)};
    });
    ASSERT_NE(f32, nullptr);
    ASSERT_NE(i32, nullptr);
    std::vector<float> a = RandomF32(Count(sa), rng), b = RandomF32(Count(sb), rng);
    a[0] = kNaN;
    if (a.size() > 2) a[2] = kInf;
    const TensorView fin[2] = {TensorView::Dense(a.data(), sa), TensorView::Dense(b.data(), sb)};
    absl::StatusOr<std::vector<Tensor>> out = (*f32)(fin);
    ASSERT_TRUE(out.ok()) << out.status();
    check(*out, a.data(), b.data(), sa, sb, 0.5);
    std::vector<int32_t> ia = RandomI32(Count(sa), rng, -3, 3),
                         ib = RandomI32(Count(sb), rng, -3, 3);
    const TensorView iin[2] = {TensorView::Dense(ia.data(), sa), TensorView::Dense(ib.data(), sb)};
    out = (*i32)(iin);
    ASSERT_TRUE(out.ok()) << out.status();
    check(*out, ia.data(), ib.data(), sa, sb, 2.0);
  }
}

// where: an f32 condition (NaN is nonzero: true) or an i32 one, over f32 or i32 values.
TEST_F(IntegerOpsTest, WhereSelects) {
  auto f32 = Jit("where_f32", [](Value c, Value a, Value b) { return where(c, a, b); });
  auto i32 = Jit("where_i32", [](Value c, Value a, Value b) { return where(c, a, b); });
  ASSERT_NE(f32, nullptr);
  ASSERT_NE(i32, nullptr);
  std::mt19937 rng(3);
  const std::vector<int64_t> sc = {5, 1}, sa = {1, 19}, sb = {};
  std::vector<float> c = {0.0f, -0.0f, kNaN, 2.5f, -1.0f};
  std::vector<float> a = RandomF32(19, rng);
  std::vector<float> b = {-7.0f};
  const TensorView in[3] = {TensorView::Dense(c.data(), sc), TensorView::Dense(a.data(), sa),
                            TensorView::Dense(b.data(), sb)};
  absl::StatusOr<std::vector<Tensor>> out = (*f32)(in);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int r = 0; r < 5; ++r) {
    for (int j = 0; j < 19; ++j) {
      const bool take_a = r >= 2;  // 0 and -0 are false; NaN, 2.5, -1 are true
      ASSERT_EQ((*out)[0].data()[r * 19 + j], take_a ? a[j] : -7.0f) << r << "," << j;
    }
  }
  std::vector<int32_t> ic = {0, 1, -5, 0, 7}, ia = RandomI32(19, rng, kMin32, kMax32), ib = {42};
  const TensorView iin[3] = {TensorView::Dense(ic.data(), sc), TensorView::Dense(ia.data(), sa),
                             TensorView::Dense(ib.data(), sb)};
  out = (*i32)(iin);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dtype(), DType::kI32);
  for (int r = 0; r < 5; ++r) {
    for (int j = 0; j < 19; ++j) {
      ASSERT_EQ((*out)[0].i32_data()[r * 19 + j], ic[r] != 0 ? ia[j] : 42) << r << "," << j;
    }
  }
}

// f32 -> i32 truncates toward zero and saturates (NaN -> 0); i32 -> f32 rounds to nearest.
TEST_F(IntegerOpsTest, CastRoundTrips) {
  auto to_i32 = Jit("to_i32", [](Value x) {
    Value i = cast(x, DType::kI32);
    return std::vector<Value>{i, cast(i, DType::kF32)};
  });
  auto to_f32 = Jit("to_f32", [](Value x) { return cast(x, DType::kF32); });
  ASSERT_NE(to_i32, nullptr);
  ASSERT_NE(to_f32, nullptr);
  const std::vector<float> x = {kNaN,  kInf,   -kInf, 3e9f, -3e9f, -2.5f,        2.5f,
                                -0.7f, 0.999f, 1e-3f, 7.0f, -8.0f, 2147483520.0f};
  const std::vector<int32_t> want = {0, kMax32, kMin32, kMax32, kMin32, -2,        2,
                                     0, 0,      0,      7,      -8,     2147483520};
  const std::vector<int64_t> shape = {static_cast<int64_t>(x.size())};
  const TensorView in[1] = {TensorView::Dense(x.data(), shape)};
  absl::StatusOr<std::vector<Tensor>> out = (*to_i32)(in);
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ((*out)[0].i32_data()[i], want[i]) << x[i];
    EXPECT_EQ((*out)[1].data()[i], static_cast<float>(want[i])) << x[i];
  }
  const std::vector<int32_t> ints = {kMin32, kMax32, 16777217, -3, 0};
  const TensorView iin[1] = {TensorView::Dense(ints.data(), {5})};
  out = (*to_f32)(iin);
  ASSERT_TRUE(out.ok()) << out.status();
  for (size_t i = 0; i < ints.size(); ++i) {
    EXPECT_EQ((*out)[0].data()[i], static_cast<float>(ints[i]));
  }
}

// iota along each axis, negative axes too; like's values are never loaded.
TEST_F(IntegerOpsTest, IotaIndexesTheDomain) {
  for (int axis : {0, 1, 2, -1, -3}) {
    auto fn = Jit("iota", [axis](Value like) { return iota(like, axis); });
    ASSERT_NE(fn, nullptr);
    const std::vector<int64_t> shape = {3, 4, 37};
    std::vector<float> like(Count(shape), kNaN);
    const TensorView in[1] = {TensorView::Dense(like.data(), shape)};
    absl::StatusOr<std::vector<Tensor>> out = (*fn)(in);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].dtype(), DType::kI32);
    const int a = axis < 0 ? axis + 3 : axis;
    for (int64_t i = 0; i < Count(shape); ++i) {
      const int64_t coord[3] = {i / (4 * 37), (i / 37) % 4, i % 37};
      ASSERT_EQ((*out)[0].i32_data()[i], coord[a]) << "axis " << axis << " at " << i;
    }
  }
  absl::StatusOr<jit::LoweredProgram> lowered = testing::LowerStatic(
      [](std::span<const Value> v) { return std::vector<Value>{iota(v[0], 1)}; }, {{5, 9}});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->tiles.calls.size(), 1u);
  const ir::Kernel& k = lowered->tiles.calls[0].kernel;
  EXPECT_EQ(k.accesses.size(), 1u) << "iota loads nothing, only stores";
  EXPECT_THAT(k.name, StartsWith("i32_elementwise_iota"));
}

// Rows of zeros for indices outside [0, depth).
TEST_F(IntegerOpsTest, OneHot) {
  auto fn = Jit("one_hot", [](Value idx) { return one_hot(idx, 11); });
  ASSERT_NE(fn, nullptr);
  const std::vector<int32_t> idx = {0, 10, 11, -1, 5, kMin32, kMax32, 3};
  const TensorView in[1] = {TensorView::Dense(idx.data(), {2, 4})};
  absl::StatusOr<std::vector<Tensor>> out = (*fn)(in);
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& t = (*out)[0];
  ASSERT_EQ(t.dtype(), DType::kF32);
  ASSERT_EQ(std::vector<int64_t>(t.dims().begin(), t.dims().end()),
            (std::vector<int64_t>{2, 4, 11}));
  for (size_t r = 0; r < idx.size(); ++r) {
    for (int c = 0; c < 11; ++c) {
      ASSERT_EQ(t.data()[r * 11 + c], idx[r] == c ? 1.0f : 0.0f) << r << "," << c;
    }
  }
}

// A causal mask over a symbolic sequence length, fused into the softmax: two lengths, one
// shape class.
TEST_F(IntegerOpsTest, CausalMaskOverSymbolicLength) {
  const Dim seq("seq", 1, 64);
  auto fn = Jit("causal",
                [](Value scores) {
                  Value mask = ge(iota(scores, -2), iota(scores, -1));
                  return softmax(where(mask, scores, constant(-1e30f)));
                },
                {.dynamic = {{0, 0, seq}, {0, 1, seq}}});
  ASSERT_NE(fn, nullptr);
  std::mt19937 rng(5);
  for (int64_t s : {5, 7}) {
    std::vector<float> scores = RandomF32(s * s, rng);
    const TensorView in[1] = {TensorView::Dense(scores.data(), {s, s})};
    absl::StatusOr<std::vector<Tensor>> out = (*fn)(in);
    ASSERT_TRUE(out.ok()) << out.status();
    for (int64_t r = 0; r < s; ++r) {
      double max = -1e300, sum = 0;
      for (int64_t c = 0; c <= r; ++c) max = std::max<double>(max, scores[r * s + c]);
      for (int64_t c = 0; c <= r; ++c) sum += std::exp(scores[r * s + c] - max);
      for (int64_t c = 0; c < s; ++c) {
        const double want = c <= r ? std::exp(scores[r * s + c] - max) / sum : 0.0;
        ASSERT_NEAR((*out)[0].data()[r * s + c], want, 1e-5) << s << ": " << r << "," << c;
      }
    }
  }
  EXPECT_EQ(fn->stats().shape_classes, 1);
  EXPECT_EQ(fn->stats().traces, 1);
}

// Cross entropy with i32 labels: -sum(one_hot(labels, C) * log_softmax(logits), -1).
TEST_F(IntegerOpsTest, CrossEntropyFromLabels) {
  constexpr int64_t kClasses = 37;
  auto fn = Jit("cross_entropy", [](Value logits, Value labels) {
    return -reduce_sum(one_hot(labels, kClasses) * log_softmax(logits), -1);
  });
  ASSERT_NE(fn, nullptr);
  std::mt19937 rng(9);
  const int64_t n = 6;
  std::vector<float> logits = RandomF32(n * kClasses, rng, -4, 4);
  std::vector<int32_t> labels = RandomI32(n, rng, 0, kClasses - 1);
  const TensorView in[2] = {TensorView::Dense(logits.data(), {n, kClasses}),
                            TensorView::Dense(labels.data(), {n})};
  absl::StatusOr<std::vector<Tensor>> out = (*fn)(in);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t r = 0; r < n; ++r) {
    double max = -1e300, sum = 0;
    for (int64_t c = 0; c < kClasses; ++c) max = std::max<double>(max, logits[r * kClasses + c]);
    for (int64_t c = 0; c < kClasses; ++c) sum += std::exp(logits[r * kClasses + c] - max);
    const double want = -(logits[r * kClasses + labels[r]] - max - std::log(sum));
    EXPECT_NEAR((*out)[0].data()[r], want, 1e-4) << r;
  }
}

// i32 through the views and concat, then cast: the kernels that move i32 data.
TEST_F(IntegerOpsTest, I32DataMovement) {
  auto fn = Jit("moves", [](Value a) {
    Value t = transpose(a, 0, 1);     // [5, 3]
    Value r = reshape(t, {15});       // copy for the reshape
    Value s = slice(r, 0, 1, 15, 2);  // 7 elements
    return std::vector<Value>{concat({s, s}, 0), cast(s, DType::kF32)};
  });
  ASSERT_NE(fn, nullptr);
  std::vector<int32_t> a(15);
  for (int i = 0; i < 15; ++i) a[i] = Wrap(int64_t{1000000007} * i);  // not exact in f32
  const TensorView in[1] = {TensorView::Dense(a.data(), {3, 5})};
  absl::StatusOr<std::vector<Tensor>> out = (*fn)(in);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<int32_t> t(15);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 3; ++j) t[i * 3 + j] = a[j * 5 + i];
  }
  ASSERT_EQ((*out)[0].dtype(), DType::kI32);
  for (int k = 0; k < 7; ++k) {
    EXPECT_EQ((*out)[0].i32_data()[k], t[1 + 2 * k]);
    EXPECT_EQ((*out)[0].i32_data()[7 + k], t[1 + 2 * k]);
    EXPECT_EQ((*out)[1].data()[k], static_cast<float>(t[1 + 2 * k]));
  }
}

// A kernel over i32 data is named (and keyed) apart from the same kernel over f32.
TEST_F(IntegerOpsTest, KernelNamesCarryTheDType) {
  auto program = [](Value a, Value b) { return maximum(a, b) + a; };
  auto f = Jit("named_f32", program);
  auto i = Jit("named_i32", program);
  ASSERT_NE(f, nullptr);
  ASSERT_NE(i, nullptr);
  const std::vector<float> fa(10, 1.0f);
  const std::vector<int32_t> ia(10, 1);
  const TensorView fin[2] = {TensorView::Dense(fa.data(), {10}),
                             TensorView::Dense(fa.data(), {10})};
  const TensorView iin[2] = {TensorView::Dense(ia.data(), {10}),
                             TensorView::Dense(ia.data(), {10})};
  ASSERT_TRUE((*f)(fin).ok());
  ASSERT_TRUE((*i)(iin).ok());
  std::vector<std::string> names;
  for (const KernelEvent& e : rt_->kernel_events()) names.push_back(e.kernel);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_THAT(names[0], StartsWith("f32_elementwise_add_max"));
  EXPECT_THAT(names[1], StartsWith("i32_elementwise_add_max"));
  EXPECT_EQ(f->stats().kernels_compiled, 1);
  EXPECT_EQ(i->stats().kernels_compiled, 1);  // not served by the f32 kernel
}

// The dtype each input was traced with holds for every later call; outputs have the result's.
TEST_F(IntegerOpsTest, CallsCheckDTypes) {
  auto fn = Jit("labels_plus_one", [](Value labels) { return labels + 1.0f; });
  ASSERT_NE(fn, nullptr);
  const std::vector<int32_t> labels = {1, 2, 3};
  const std::vector<float> floats = {1, 2, 3, 4};
  std::vector<int32_t> iout(3);
  std::vector<float> fout(3);
  ASSERT_TRUE(
      fn->Call({TensorView::Dense(labels.data(), {3})}, {TensorView::Dense(iout.data(), {3})})
          .ok());
  EXPECT_EQ(iout, (std::vector<int32_t>{2, 3, 4}));
  absl::Status s =
      fn->Call({TensorView::Dense(floats.data(), {3})}, {TensorView::Dense(iout.data(), {3})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "input 0: dtype f32 does not match the dtype the function was traced with, i32");
  // Another shape (a new trace variant) is refused the same way before any trace.
  s = fn->Call({TensorView::Dense(floats.data(), {4})}, {TensorView::Dense(fout.data(), {4})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "input 0: dtype f32 does not match the dtype the function was traced with, i32");
  EXPECT_EQ(fn->stats().traces, 1);
  s = fn->Call({TensorView::Dense(labels.data(), {3})}, {TensorView::Dense(fout.data(), {3})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "output 0: dtype f32 does not match the result's dtype, i32");
  const TensorView bad[1] = {TensorView::Dense(floats.data(), {3})};
  EXPECT_EQ((*fn)(bad).status().message(),
            "input 0: dtype f32 does not match the dtype the function was traced with, i32");
}

// Ops that do not take i32 say so at the call that traces them.
TEST_F(IntegerOpsTest, RefusedI32Uses) {
  const std::vector<int32_t> ints = {1, 2, 3};
  const TensorView in[1] = {TensorView::Dense(ints.data(), {3})};
  struct Case {
    std::function<Value(Value)> fn;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](Value x) { return pto::exp(x); }, "exp: input 0 is i32; exp takes f32 (cast it first)"},
      {[](Value x) { return reduce_sum(x, 0); },
       "reduce_sum: input 0 is i32; reduce_sum takes f32 (cast it first)"},
      {[](Value x) { return softmax(x); },
       "softmax: input 0 is i32; softmax takes f32 (cast it "
       "first)"},
      {[](Value x) { return x / x; }, "div: input 0 is i32; div takes f32 (cast it first)"},
      {[](Value x) { return x * 0.5f; },
       "mul: input 1 dtype f32 differs from input 0 dtype i32; all inputs must share one dtype"},
      {[](Value x) { return one_hot(cast(x, DType::kF32), 3); },
       "one_hot: input 0 is f32; one_hot takes i32 indices (cast it first)"},
      {[](Value x) { return cast(x, DType::kF16); },
       "cast: target dtype f16 is not supported yet (only f32 and i32)"},
  };
  for (const Case& c : cases) {
    auto fn = Jit("refused", [f = c.fn](Value x) { return f(x); });
    ASSERT_NE(fn, nullptr);
    absl::StatusOr<std::vector<Tensor>> out = (*fn)(in);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().message(), c.message);
    EXPECT_EQ(out.status().code(), c.message.find("f16") != std::string::npos
                                       ? absl::StatusCode::kUnimplemented
                                       : absl::StatusCode::kInvalidArgument);
  }
}

// Masks fused into a matmul's epilogue (attention scores) and into a reduction's prologue.
TEST_F(IntegerOpsTest, MasksFuseIntoMatMulAndReduction) {
  auto fn = Jit("attention_mask", [](Value q, Value k, Value x) {
    Value scores = matmul(q, k, {.transpose_b = true});
    Value masked = where(ge(iota(scores, -2), iota(scores, -1)), scores, constant(-1e30f));
    Value positives = reduce_sum(gt(x, 0.0f) * cast(iota(x, -1), DType::kF32), -1);
    return std::vector<Value>{masked, positives};
  });
  ASSERT_NE(fn, nullptr);
  std::mt19937 rng(13);
  const int64_t s = 9, d = 20, n = 37;
  std::vector<float> q = RandomF32(s * d, rng), k = RandomF32(s * d, rng);
  std::vector<float> x = RandomF32(3 * n, rng);
  const TensorView in[3] = {TensorView::Dense(q.data(), {s, d}),
                            TensorView::Dense(k.data(), {s, d}),
                            TensorView::Dense(x.data(), {3, n})};
  absl::StatusOr<std::vector<Tensor>> out = (*fn)(in);
  ASSERT_TRUE(out.ok()) << out.status();
  for (int64_t r = 0; r < s; ++r) {
    for (int64_t c = 0; c < s; ++c) {
      double dot = 0;
      for (int64_t j = 0; j < d; ++j) dot += double{q[r * d + j]} * k[c * d + j];
      const float got = (*out)[0].data()[r * s + c];
      if (c > r) {
        ASSERT_EQ(got, -1e30f) << r << "," << c;
      } else {
        ASSERT_NEAR(got, dot, 1e-4) << r << "," << c;
      }
    }
  }
  for (int64_t r = 0; r < 3; ++r) {
    double want = 0;
    for (int64_t c = 0; c < n; ++c) want += x[r * n + c] > 0 ? c : 0;
    EXPECT_EQ((*out)[1].data()[r], want) << r;
  }
}

// check_numerics reads no i32 buffer as floats: integers whose bits are a NaN's pass.
TEST_F(IntegerOpsTest, CheckNumericsSkipsIntegers) {
  FunctionOptions options;
  options.check_numerics = true;
  auto fn = Jit(
      "checked",
      [](Value a) {
        return std::vector<Value>{a + a, a * 2.0f};
      },
      options);
  ASSERT_NE(fn, nullptr);
  const std::vector<int32_t> nan_bits = {0x7fc00000, 0x3fffffff, -1};  // 2 * 0x3fffffff: NaN bits
  const TensorView in[1] = {TensorView::Dense(nan_bits.data(), {3})};
  absl::StatusOr<std::vector<Tensor>> out = (*fn)(in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].i32_data()[1], 0x7ffffffe);
  EXPECT_EQ((*out)[1].i32_data()[0], Wrap(int64_t{0x7fc00000} * 2));
}

// A GraphDef keeps i32 inputs, the new ops and their attributes; the graph hash tells the i32
// program from the same program over f32.
TEST_F(IntegerOpsTest, GraphDefAndHashCarryDTypes) {
  const TraceFn program = [](std::span<const Value> v) {
    Value mask = where(reshape(lt(v[0], v[1]), {4, 1}), one_hot(v[0], 5), constant(2.0f));
    return std::vector<Value>{mask, iota(v[1], -1), cast(v[0], DType::kF32)};
  };
  auto traced = [&](ir::DType dtype) {
    std::vector<jit::TraceInput> inputs(2);
    inputs[0].shape = {ir::SymExpr(4)};
    inputs[1].shape = {ir::SymExpr(4)};
    inputs[0].dtype = inputs[1].dtype = dtype;
    return jit::Trace(program, inputs, {});
  };
  absl::StatusOr<ir::Graph> g = traced(ir::DType::kI32);
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<ir::Graph> back = graph::FromGraphDef(graph::ToGraphDef(*g));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ToString(), g->ToString());
  EXPECT_EQ(graph::CanonicalGraphHash(*back).Hex(), graph::CanonicalGraphHash(*g).Hex());
  EXPECT_THAT(g->ToString(), HasSubstr("one_hot(%0) depth=5 : f32[4, 5]"));
  EXPECT_THAT(g->ToString(), HasSubstr("iota(%1) axis=0 : i32[4]"));
  // The same program over f32 fails one_hot's rule; without it, the hashes differ by dtype.
  EXPECT_FALSE(traced(ir::DType::kF32).ok());
  const TraceFn add = [](std::span<const Value> v) { return std::vector<Value>{v[0] + v[1]}; };
  std::vector<jit::TraceInput> inputs(2);
  inputs[0].shape = inputs[1].shape = {ir::SymExpr(4)};
  absl::StatusOr<ir::Graph> f = jit::Trace(add, inputs, {});
  inputs[0].dtype = inputs[1].dtype = ir::DType::kI32;
  absl::StatusOr<ir::Graph> i = jit::Trace(add, inputs, {});
  ASSERT_TRUE(f.ok() && i.ok());
  EXPECT_NE(graph::CanonicalGraphHash(*f).Hex(), graph::CanonicalGraphHash(*i).Hex());
}

// Each op compiled against the ops/ reference on random shapes: broadcasting, size-1 and size-0
// dims, rows that are no multiple of the vector width.
ops::HostTensor RandomInput(const std::vector<int64_t>& shape, ir::DType dtype, uint64_t seed) {
  if (dtype == ir::DType::kI32) {
    std::mt19937 rng(static_cast<uint32_t>(seed));
    return ops::HostTensor::I32(shape, RandomI32(Count(shape), rng, -6, 6));
  }
  ops::HostTensor t = ops::HostTensor::Random(shape, seed, -3, 3);
  for (float& x : t.data) x = std::round(x * 2) / 2;  // ties for eq, le, ge
  return t;
}

TEST_F(IntegerOpsTest, EachOpAgainstTheReference) {
  using ir::DType;
  using Shapes = std::vector<std::vector<int64_t>>;
  struct Case {
    std::string name;
    std::vector<DType> dtypes;
    std::function<Value(std::span<const Value>)> fn;
    std::vector<Shapes> shapes;
  };
  const std::vector<Shapes> binary = {{{3, 37}, {37}}, {{1}, {}},         {{2, 1, 17}, {3, 1}},
                                      {{0, 5}, {5}},   {{6, 1}, {1, 23}}, {{70}, {70}}};
  const std::vector<Shapes> ternary = {
      {{3, 37}, {37}, {}}, {{1, 17}, {4, 1}, {17}}, {{0, 3}, {3}, {1}}, {{5}, {5}, {5}}};
  const std::vector<Shapes> unary = {{{}}, {{1}}, {{0}}, {{7}}, {{3, 17}}, {{2, 5, 33}}};
  const DType f = DType::kF32, i = DType::kI32;
  using V = std::span<const Value>;
  std::vector<Case> cases = {
      {"eq", {f, f}, [](V v) { return eq(v[0], v[1]); }, binary},
      {"ne", {i, i}, [](V v) { return ne(v[0], v[1]); }, binary},
      {"lt", {f, f}, [](V v) { return lt(v[0], v[1]); }, binary},
      {"le", {i, i}, [](V v) { return le(v[0], v[1]); }, binary},
      {"gt", {i, i}, [](V v) { return gt(v[0], v[1]); }, binary},
      {"ge", {f, f}, [](V v) { return ge(v[0], v[1]); }, binary},
      {"where_f32", {f, f, f}, [](V v) { return where(v[0], v[1], v[2]); }, ternary},
      {"where_i32", {i, i, i}, [](V v) { return where(v[0], v[1], v[2]); }, ternary},
      {"where_i32_cond", {i, f, f}, [](V v) { return where(v[0], v[1], v[2]); }, ternary},
      {"add_i32", {i, i}, [](V v) { return v[0] + v[1]; }, binary},
      {"sub_i32", {i, i}, [](V v) { return v[0] - v[1]; }, binary},
      {"mul_i32", {i, i}, [](V v) { return v[0] * v[1]; }, binary},
      {"max_i32", {i, i}, [](V v) { return maximum(v[0], v[1]); }, binary},
      {"min_i32", {i, i}, [](V v) { return minimum(v[0], v[1]); }, binary},
      {"neg_i32", {i}, [](V v) { return -v[0]; }, unary},
      {"abs_i32", {i}, [](V v) { return abs(v[0]); }, unary},
      {"cast_to_i32", {f}, [](V v) { return cast(v[0] * 1.7f, pto::DType::kI32); }, unary},
      {"cast_to_f32", {i}, [](V v) { return cast(v[0], pto::DType::kF32); }, unary},
      {"iota_last", {f}, [](V v) { return iota(v[0], -1); }, {{{7}}, {{3, 17}}, {{2, 5, 33}}}},
      {"iota_first", {i}, [](V v) { return iota(v[0], 0); }, {{{7}}, {{3, 17}}, {{2, 5, 33}}}},
      {"one_hot", {i}, [](V v) { return one_hot(v[0], 5); }, unary},
      {"one_hot_wide", {i}, [](V v) { return one_hot(v[0] + 3.0f, 19); }, unary},
      {"mask_times_x", {f, f}, [](V v) { return gt(v[0], v[1]) * v[0]; }, binary},
  };
  uint64_t seed = 1;
  for (const Case& c : cases) {
    for (const Shapes& shapes : c.shapes) {
      SCOPED_TRACE(c.name + " " + ::testing::PrintToString(shapes));
      std::vector<ops::HostTensor> inputs;
      for (size_t k = 0; k < shapes.size(); ++k) {
        inputs.push_back(RandomInput(shapes[k], c.dtypes[k], seed++));
      }
      const TraceFn trace = [fn = c.fn](std::span<const Value> v) {
        return std::vector<Value>{fn(v)};
      };
      absl::StatusOr<std::unique_ptr<Function>> fn =
          rt_->JitTraced(c.name, static_cast<int>(shapes.size()), trace, {});
      ASSERT_TRUE(fn.ok()) << fn.status();
      EXPECT_EQ(testing::DiffFromReference(**fn, trace, inputs, ops::Tolerance{0, 0}), "");
    }
  }
}

}  // namespace
}  // namespace pto
