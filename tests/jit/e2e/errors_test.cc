// Bad input gets a specific status code and message, never a crash.
#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ::testing::HasSubstr;

// Each case cold, and after a valid call with the right shapes (a warm call's checks are
// partly remembered per thread: jit/call_memo.h; a bad call must get the same error).
class ErrorsTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    rt_ = testing::OpenRuntime();
    ASSERT_NE(rt_, nullptr);
    Dim batch("batch", 1, 64);
    auto fn = rt_->Jit("affine", [](Value x, Value w) { return matmul(x, w) + 1.0f; },
                       {.dynamic = {{0, 0, batch}}});
    ASSERT_TRUE(fn.ok()) << fn.status();
    fn_ = *std::move(fn);
    if (GetParam()) {
      ASSERT_TRUE(Call({x(), w()}, {y()}).ok());
      ASSERT_TRUE(Call({x(), w()}, {y()}).ok());
    }
  }
  absl::Status Call(std::vector<TensorView> in, std::vector<TensorView> out) {
    return (*fn_)(in, out);
  }

  std::unique_ptr<Runtime> rt_;
  std::unique_ptr<Function> fn_;
  std::vector<float> x_ = std::vector<float>(4 * 8, 1.0f);
  std::vector<float> w_ = std::vector<float>(8 * 3, 1.0f);
  std::vector<float> y_ = std::vector<float>(4 * 3, 0.0f);
  TensorView x() { return TensorView::Dense(x_.data(), {4, 8}); }
  TensorView w() { return TensorView::Dense(w_.data(), {8, 3}); }
  TensorView y() { return TensorView::Dense(y_.data(), {4, 3}); }
};

TEST_P(ErrorsTest, ValidCallWorks) {
  ASSERT_TRUE(Call({x(), w()}, {y()}).ok());
  EXPECT_FLOAT_EQ(y_[0], 9.0f);
}

TEST_P(ErrorsTest, WrongNumberOfInputs) {
  absl::Status s = Call({x()}, {y()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("function 'affine' takes 2 inputs, got 1"));
}

TEST_P(ErrorsTest, WrongNumberOfOutputs) {
  absl::Status s = Call({x(), w()}, {y(), y()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("produces 1 outputs, got 2 output views"));
}

TEST_P(ErrorsTest, DTypeMismatch) {
  TensorView bad = x();
  bad.dtype = DType::kBF16;
  absl::Status s = Call({bad, w()}, {y()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input 0: dtype bf16 is not supported (expected f32 or i32)"));
}

TEST_P(ErrorsTest, RankMismatchAgainstTrace) {
  ASSERT_TRUE(Call({x(), w()}, {y()}).ok());
  TensorView x3 = TensorView::Dense(x_.data(), {2, 2, 8});
  absl::Status s = Call({x3, w()}, {y()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input 0: rank 3 does not match the traced rank 2"));
}

TEST_P(ErrorsTest, ShapeMismatchOfOutput) {
  TensorView bad = TensorView::Dense(y_.data(), {3, 4});
  absl::Status s = Call({x(), w()}, {bad});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("output 0: shape [3, 4] does not match the result shape [4, 3]"));
}

TEST_P(ErrorsTest, SymbolicDimOutsideDeclaredRange) {
  std::vector<float> big(100 * 8, 0.0f), out(100 * 3);
  absl::Status s = Call({TensorView::Dense(big.data(), {100, 8}), w()},
                        {TensorView::Dense(out.data(), {100, 3})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("input 0 dim 0 (batch) is 100, outside the declared range [1, 64]"));
}

TEST_P(ErrorsTest, NullDataPointer) {
  TensorView bad = x();
  bad.data = nullptr;
  absl::Status s = Call({bad, w()}, {y()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input 0: data pointer is null"));
  TensorView bad_out = y();
  bad_out.data = nullptr;
  s = Call({x(), w()}, {bad_out});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("output 0: data pointer is null"));
}

TEST_P(ErrorsTest, MisalignedDataPointer) {
  TensorView bad = x();
  bad.data = reinterpret_cast<char*>(x_.data()) + 1;
  absl::Status s = Call({bad, w()}, {y()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input 0: data pointer is not aligned to 4 bytes"));
}

TEST_P(ErrorsTest, UnsupportedStrides) {
  TensorView bad = x();
  bad.strides[0] = 1;
  bad.strides[1] = 4;  // column-major
  absl::Status s = Call({bad, w()}, {y()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("input 0: strides [1, 4] for shape [4, 8] are not dense row-major"));
}

TEST_P(ErrorsTest, ElementCountOverflowsInt64) {
  TensorView huge = x();
  huge.shape[0] = std::numeric_limits<int64_t>::max() / 2;
  huge.shape[1] = 8;
  absl::Status s = Call({huge, w()}, {y()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("has more elements than int64 can count"));
}

TEST_P(ErrorsTest, NegativeDim) {
  TensorView bad = x();
  bad.shape[0] = -4;
  absl::Status s = Call({bad, w()}, {y()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input 0: dim 0 is negative (-4)"));
}

TEST_P(ErrorsTest, RankAboveMaximum) {
  std::vector<int64_t> nine(9, 1);
  TensorView bad = TensorView::Dense(x_.data(), nine);
  absl::Status s = Call({bad, w()}, {y()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input 0: rank -1 is outside [0, 8]"));
}

TEST_P(ErrorsTest, OutputOverlappingInput) {
  TensorView alias = TensorView::Dense(x_.data(), {4, 3});
  absl::Status s = Call({x(), w()}, {alias});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("output 0 overlaps input 0"));
}

TEST_P(ErrorsTest, IncompatibleShapesAtTraceTime) {
  std::vector<float> wrong(5 * 3, 0.0f);
  absl::Status s = Call({x(), TensorView::Dense(wrong.data(), {5, 3})}, {y()});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  // The message names the op, the input and both shapes.
  EXPECT_THAT(s.message(), HasSubstr("matmul"));
  EXPECT_THAT(s.message(), HasSubstr("[batch, 8]"));
  EXPECT_THAT(s.message(), HasSubstr("[5, 3]"));
}

INSTANTIATE_TEST_SUITE_P(ColdAndWarm, ErrorsTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "AfterValidCalls" : "Cold";
                         });

TEST(TraceErrors, BroadcastMismatchNamesOpInputAndShapes) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("bad_add", [](Value a, Value b) { return a + b; });
  ASSERT_TRUE(fn.ok());
  std::vector<float> a(6), b(8), out(6);
  absl::Status s =
      (**fn)({TensorView::Dense(a.data(), {2, 3}), TensorView::Dense(b.data(), {2, 4})},
             {TensorView::Dense(out.data(), {2, 3})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      s.message(),
      HasSubstr("add: input 1 shape [2, 4] is not broadcastable with input 0 shape [2, 3]"));
}

TEST(TraceErrors, DefaultConstructedValue) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("bad_value", [](Value a) { return a + Value(); });
  ASSERT_TRUE(fn.ok());
  std::vector<float> a(3), out(3);
  absl::Status s = (**fn)({TensorView::Dense(a.data(), {3})}, {TensorView::Dense(out.data(), {3})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("add: input 1 is not a traced value"));
}

TEST(OptionErrors, InputDTypesOfAnotherCountOrAnUncompiledDType) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("f", [](Value a) { return a; }, {.input_dtypes = {DType::kF32, DType::kI32}});
  EXPECT_EQ(fn.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fn.status().message(), "input_dtypes names 2 dtypes for 1 inputs");
  fn = rt->Jit("f", [](Value a) { return a; }, {.input_dtypes = {DType::kF16}});
  EXPECT_EQ(fn.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fn.status().message(), "input_dtypes: input 0 is f16; inputs are f32 or i32");
  // Declared, they make a trace from shapes alone take i32 where a view would.
  fn = rt->Jit("labels", [](Value a) { return one_hot(a, 4); }, {.input_dtypes = {DType::kI32}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  EXPECT_TRUE((*fn)->Precompile({{3}}).ok());
}

TEST(OptionErrors, DynamicDimOfMissingInput) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("f", [](Value a) { return a; }, {.dynamic = {{3, 0, Dim("n", 1, 8)}}});
  EXPECT_EQ(fn.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(fn.status().message(),
              HasSubstr("dynamic dim 'n': input 3 does not exist (1 inputs)"));
}

TEST(OptionErrors, NegativeThreads) {
  auto rt = Runtime::Open({.intra_op_threads = -2});
  EXPECT_EQ(rt.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rt.status().message(), HasSubstr("intra_op_threads must be >= 0"));
}

TEST(OptionErrors, UnknownThreadPinning) {
  auto rt = Runtime::Open({.thread_pinning = static_cast<ThreadPinning>(7)});
  EXPECT_EQ(rt.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rt.status().message(), "thread_pinning must be kAuto, kAlways or kNever, got 7");
}

TEST(AbsurdSizes, IntermediateTooLargeIsResourceExhausted) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  // A 200000 x 200000 intermediate (160 GB) from an 800 KB input.
  auto fn =
      rt->Jit("outer", [](Value x) { return reduce_sum(matmul(x, x, {.transpose_b = true}), 1); });
  ASSERT_TRUE(fn.ok());
  const int64_t n = 200000;
  std::vector<float> x(n, 1.0f), out(n);
  absl::Status s =
      (**fn)({TensorView::Dense(x.data(), {n, 1})}, {TensorView::Dense(out.data(), {n})});
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(),
              HasSubstr("cannot allocate 160000000000 bytes for intermediate buffers"));
}

TEST(StaticDims, ChangedStaticDimWithoutAutomaticDynamicIsAnError) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("f", [](Value a) { return a * 2.0f; }, {.automatic_dynamic = false});
  ASSERT_TRUE(fn.ok());
  std::vector<float> a(8), out(8);
  ASSERT_TRUE(
      (**fn)({TensorView::Dense(a.data(), {4})}, {TensorView::Dense(out.data(), {4})}).ok());
  absl::Status s = (**fn)({TensorView::Dense(a.data(), {8})}, {TensorView::Dense(out.data(), {8})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input 0 dim 0 is 8 but the function was traced with 4"));
}

}  // namespace
}  // namespace pto
