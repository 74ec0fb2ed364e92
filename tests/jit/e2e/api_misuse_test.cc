// API misuse gets a specific status, never a silently wrong answer: a Value kept from an earlier
// trace, outputs sharing memory, and results no TensorView can hold.
#include <cstdint>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ::testing::HasSubstr;

// Meant to compute x * 1 + 200, keeping the constant across traces: the second trace (a new
// shape) must refuse the kept Value, not bind its node id to a node of the new trace (which
// gave x * 1 + 1).
TEST(ApiMisuse, AValueKeptFromAnEarlierTraceIsRefused) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  Value kept;
  bool have_kept = false;
  auto fn = rt->Jit("kept_value", [&](Value x) {
    if (!have_kept) {
      kept = constant(200.0f);
      have_kept = true;
    }
    return x * 1.0f + kept;
  });
  ASSERT_TRUE(fn.ok());
  const std::vector<float> ones(2, 1.0f);
  std::vector<float> out(2, 0.0f);
  ASSERT_TRUE(
      (*fn)
          ->Call({TensorView::Dense(ones.data(), {1})}, {TensorView::Dense(out.data(), {1})})
          .ok());
  EXPECT_FLOAT_EQ(out[0], 201.0f);
  EXPECT_FALSE(kept.valid());  // its trace has ended
  EXPECT_EQ(kept.rank(), -1);

  const absl::Status s =
      (*fn)->Call({TensorView::Dense(ones.data(), {2})}, {TensorView::Dense(out.data(), {2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("add: input 1 is a Value from another trace"));
}

TEST(ApiMisuse, AKeptValueReturnedAsAnOutputIsRefused) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  Value kept;
  auto fn = rt->Jit("returns_kept", [&](Value x) {
    if (!kept.valid() && x.static_dim(0) == 1) kept = x * 2.0f;
    return kept;
  });
  ASSERT_TRUE(fn.ok());
  std::vector<float> in(2, 1.0f), out(2);
  ASSERT_TRUE(
      (*fn)->Call({TensorView::Dense(in.data(), {1})}, {TensorView::Dense(out.data(), {1})}).ok());
  const absl::Status s =
      (*fn)->Call({TensorView::Dense(in.data(), {2})}, {TensorView::Dense(out.data(), {2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("output 0 is a Value from another trace"));
}

class OutputOverlap : public ::testing::Test {
 protected:
  void SetUp() override {
    rt_ = testing::OpenRuntime();
    auto fn = rt_->Jit("two_outputs", [](Value x) { return std::make_tuple(x * 2.0f, x + 1.0f); });
    ASSERT_TRUE(fn.ok());
    fn_ = *std::move(fn);
  }
  absl::Status Call(float* out0, float* out1) {
    return fn_->Call({TensorView::Dense(x_.data(), {4})},
                     {TensorView::Dense(out0, {4}), TensorView::Dense(out1, {4})});
  }

  std::unique_ptr<Runtime> rt_;
  std::unique_ptr<Function> fn_;
  std::vector<float> x_ = {1, 2, 3, 4};
  std::vector<float> out_ = std::vector<float>(8, 0.0f);
};

TEST_F(OutputOverlap, TheSameViewTwiceIsRefused) {
  const absl::Status s = Call(out_.data(), out_.data());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("output 1 overlaps output 0"));
}

TEST_F(OutputOverlap, PartlyOverlappingViewsAreRefused) {
  const absl::Status s = Call(out_.data(), out_.data() + 3);  // share out_[3]
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("output 1 overlaps output 0"));
  const absl::Status reversed = Call(out_.data() + 3, out_.data());
  EXPECT_EQ(reversed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(reversed.message(), HasSubstr("output 1 overlaps output 0"));
}

TEST_F(OutputOverlap, AdjacentViewsAreFine) {
  ASSERT_TRUE(Call(out_.data(), out_.data() + 4).ok());
  EXPECT_EQ(out_, (std::vector<float>{2, 4, 6, 8, 2, 3, 4, 5}));
}

TEST_F(OutputOverlap, AnOutputOverlappingAnInputIsStillRefused) {
  const absl::Status s = Call(out_.data(), x_.data());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("output 1 overlaps input 0 (pto does not compute in place)"));
}

TEST(OutputShapes, ARankAboveTheMaximumIsRefusedAtTrace) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("rank9", [](Value x) { return reshape(x, {1, 1, 1, 1, 1, 1, 1, 1, 4}); });
  ASSERT_TRUE(fn.ok());
  const std::vector<float> x(4, 1.0f);
  absl::StatusOr<std::vector<Tensor>> out = (**fn)({TensorView::Dense(x.data(), {4})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("(reshape): ints count 9 exceeds the limit kMaxRank = 8"));
}

TEST(OutputShapes, AReshapeWhoseSizeOverflowsIsRefused) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  // (2^62 + 1) * 4 wraps around to 4 in int64.
  auto fn = rt->Jit("overflow", [](Value x) { return reshape(x, {(int64_t{1} << 62) + 1, 4}); });
  ASSERT_TRUE(fn.ok());
  const std::vector<float> x(4, 1.0f);
  absl::StatusOr<std::vector<Tensor>> out = (**fn)({TensorView::Dense(x.data(), {4})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("reshape: spec [4611686018427387905, 4] for input 0 shape [4] asks for "
                        "more elements than int64 can count"));
}

TEST(OutputShapes, AHugeDimThatChangesBetweenCallsIsInvalidArgument) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("scale", [](Value x) { return x * 2.0f; });
  ASSERT_TRUE(fn.ok());
  absl::StatusOr<std::vector<std::vector<int64_t>>> small = (*fn)->OutputShapes({{4}});
  ASSERT_TRUE(small.ok()) << small.status();
  absl::StatusOr<std::vector<std::vector<int64_t>>> huge =
      (*fn)->OutputShapes({{int64_t{1} << 41}});
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(huge.status().message(),
              HasSubstr("input 0 dim 0 is 2199023255552, above 1099511627776, the largest size "
                        "pto supports for a dim that changes between calls"));
}

TEST(OutputShapes, InputShapesWhoseSizeOverflowsAreInvalidArgument) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("scale", [](Value x) { return x * 2.0f; });
  ASSERT_TRUE(fn.ok());
  absl::StatusOr<std::vector<std::vector<int64_t>>> shapes =
      (*fn)->OutputShapes({{int64_t{1} << 40, int64_t{1} << 40}});
  EXPECT_EQ(shapes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(shapes.status().message(),
              HasSubstr("input 0: shape [1099511627776, 1099511627776] has more elements than "
                        "int64 can count"));
}

// Each input fits, but the product of two symbolic dims does not: the output is refused with
// the shape (not an allocation failure, and not a wrapped size).
TEST(OutputShapes, AnOutputWhoseSizeOverflowsIsInvalidArgument) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  const int64_t big = int64_t{1} << 40;
  auto fn = rt->Jit("outer", [](Value x, Value y) { return matmul(x, y); },
                    {.dynamic = {{0, 0, Dim("n", 1, big)}, {1, 1, Dim("m", 1, big)}}});
  ASSERT_TRUE(fn.ok());
  std::vector<float> data(4);
  absl::StatusOr<std::vector<Tensor>> out = (**fn)(std::vector<TensorView>{
      TensorView::Dense(data.data(), {big, 4}), TensorView::Dense(data.data(), {4, big})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("output 0: shape [1099511627776, 1099511627776] has more elements than "
                        "int64 can count"));
}

// A size int64 holds but pto does not allocate for one tensor: ResourceExhausted with the
// shape and the limit, before anything is compiled.
TEST(OutputShapes, AnOutputAboveTheAllocationLimitSaysSo) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("outer", [](Value x, Value y) { return matmul(x, y); });
  ASSERT_TRUE(fn.ok());
  const int64_t n = int64_t{1} << 21;
  std::vector<float> x(n, 1.0f), y(n, 1.0f);
  absl::StatusOr<std::vector<Tensor>> out = (**fn)(std::vector<TensorView>{
      TensorView::Dense(x.data(), {n, 1}), TensorView::Dense(y.data(), {1, n})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(out.status().message(),
              HasSubstr("output 0: shape [2097152, 2097152] has 4398046511104 elements, more "
                        "than pto allocates for one tensor (1099511627776)"));
  EXPECT_EQ((*fn)->stats().compiles, 0);
}

}  // namespace
}  // namespace pto
