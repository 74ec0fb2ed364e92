// Slices of symbolic dims follow numpy at run time: negative start/end count from the end, both
// clamp to [0, size], step >= 1, the length comes from the call's size (an empty result is
// legal), whatever the bounds were at trace time. Every result is compared with the ops/
// reference of the same program traced on the call's static shapes.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;
using ::testing::HasSubstr;

constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

// A Function of one input [rows, 4] whose rows are the symbol `rows` in [1, 4096].
std::unique_ptr<Function> RowsFunction(Runtime& rt, const TraceFn& trace) {
  Dim rows("rows", 1, 4096);
  absl::StatusOr<std::unique_ptr<Function>> fn =
      rt.JitTraced("slice_rows", 1, trace, {.dynamic = {{0, 0, rows}}});
  EXPECT_TRUE(fn.ok()) << fn.status();
  return fn.ok() ? *std::move(fn) : nullptr;
}

// Calls `fn` on a random [rows, 4] input; expects the reference's result and its row count.
void ExpectRows(Function& fn, const TraceFn& trace, int64_t rows, int64_t expected_rows) {
  SCOPED_TRACE(absl::StrCat("input rows ", rows));
  const std::vector<HostTensor> in = {HostTensor::Random({rows, 4}, 7 + rows)};
  absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(trace, in);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ((*want)[0].shape, (std::vector<int64_t>{expected_rows, 4}));
  absl::StatusOr<std::vector<HostTensor>> got = testing::RunPto(fn, in);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ((*got)[0].shape, (*want)[0].shape);
  EXPECT_EQ(testing::Compare(*got, *want, ops::OpTolerance(ir::OpKind::kSlice, 1)), "");
}

TraceFn SliceRows(int64_t start, int64_t end, int64_t step = 1) {
  return [=](std::span<const Value> v) {
    return std::vector<Value>{slice(v[0], 0, start, end, step) + 1.0f};
  };
}

class SymbolicSlice : public ::testing::Test {
 protected:
  void SetUp() override {
    rt_ = testing::OpenRuntime();
    ASSERT_NE(rt_, nullptr);
  }
  // x[start:end:step] + 1 on x of [rows, 4], one Function called at each {rows, expected rows}.
  void ExpectSlice(int64_t start, int64_t end, int64_t step,
                   const std::vector<std::pair<int64_t, int64_t>>& rows_and_expected) {
    SCOPED_TRACE(absl::StrCat("rows[", start, ":", end, ":", step, "]"));
    const TraceFn trace = SliceRows(start, end, step);
    std::unique_ptr<Function> fn = RowsFunction(*rt_, trace);
    ASSERT_NE(fn, nullptr);
    for (const auto& [rows, expected] : rows_and_expected) ExpectRows(*fn, trace, rows, expected);
  }
  std::unique_ptr<Runtime> rt_;
};

TEST_F(SymbolicSlice, EndPastTheSizeClamps) {
  ExpectSlice(0, 1000, 1, {{3, 3}, {2, 2}, {1000, 1000}, {1500, 1000}});
}

TEST_F(SymbolicSlice, HugeEndClamps) { ExpectSlice(1, 100000000, 1, {{3, 2}, {1, 0}}); }

TEST_F(SymbolicSlice, StepCountsFromTheRuntimeSize) {
  // numpy: np.arange(3)[2:40:7] has 1 element; [2:40:7] of 10 rows takes rows 2 and 9.
  ExpectSlice(2, 40, 7, {{3, 1}, {2, 0}, {9, 1}, {10, 2}, {100, 6}});
}

TEST_F(SymbolicSlice, StepToTheEnd) {
  ExpectSlice(1, kToEnd, 3, {{3, 1}, {4, 1}, {5, 2}, {1, 0}, {70, 23}});
}

TEST_F(SymbolicSlice, NegativeStartCountsFromTheEnd) {
  ExpectSlice(-2, kToEnd, 1, {{3, 2}, {1, 1}, {9, 2}});  // at 1 row, -2 clamps to 0
}

TEST_F(SymbolicSlice, NegativeEndCountsFromTheEnd) {
  ExpectSlice(0, -1, 1, {{3, 2}, {1, 0}, {17, 16}});
}

TEST_F(SymbolicSlice, NegativeStartAndEndWithStep) {
  // x[-5:-1:2]: rows 0 (after clamping start) and 2 of 4 rows; rows 1 and 3 of 6.
  ExpectSlice(-5, -1, 2, {{4, 2}, {6, 2}, {2, 1}, {1, 0}, {50, 2}});
}

TEST_F(SymbolicSlice, NegativeStartWithNonNegativeEnd) {
  // x[-5:3]: its length first grows, then shrinks with the size (numpy clamps both ends).
  std::vector<std::pair<int64_t, int64_t>> cases;
  for (int64_t rows : {1, 2, 3, 5, 6, 7, 8, 9}) {
    const int64_t start = std::max<int64_t>(rows - 5, 0), end = std::min<int64_t>(3, rows);
    cases.push_back({rows, std::max<int64_t>(end - start, 0)});
  }
  ExpectSlice(-5, 3, 1, cases);
}

TEST_F(SymbolicSlice, EmptyResults) {
  ExpectSlice(5, 10, 1, {{3, 0}, {7, 2}});
  ExpectSlice(2, 1, 1, {{3, 0}});
  ExpectSlice(3, 3, 1, {{3, 0}, {9, 0}});
}

TEST_F(SymbolicSlice, StepZeroAndNegativeAreInvalid) {
  for (int64_t step : {0, -1}) {
    SCOPED_TRACE(step);
    std::unique_ptr<Function> fn = RowsFunction(*rt_, SliceRows(0, 2, step));
    ASSERT_NE(fn, nullptr);
    absl::StatusOr<std::vector<HostTensor>> got =
        testing::RunPto(*fn, {HostTensor::Random({3, 4}, 1)});
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(
        got.status().message(),
        HasSubstr(absl::StrCat("slice: start 0, end 2, step ", step,
                               " on axis 0 of input 0 shape [rows, 4]: step must be >= 1")));
  }
}

// Slices with the same bounds of dims that are one symbol have one length: they broadcast,
// add and concatenate like equal dims, and their lengths follow each call.
TEST_F(SymbolicSlice, SlicesOfOneSymbolAgree) {
  const TraceFn trace = [](std::span<const Value> v) {
    Value a = slice(v[0], 0, -3, kToEnd), b = slice(v[1], 0, -3, kToEnd);
    Value tail = slice(v[0], 0, 1, kToEnd, 2);
    return std::vector<Value>{a * b + 1.0f, concat({a, tail}, 0)};
  };
  Dim rows("rows", 1, 4096);
  auto fn = rt_->JitTraced("same_bounds", 2, trace, {.dynamic = {{0, 0, rows}, {1, 0, rows}}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  for (int64_t n : {1, 2, 3, 4, 7, 8, 33}) {
    SCOPED_TRACE(n);
    const std::vector<HostTensor> in = {HostTensor::Random({n, 5}, n),
                                        HostTensor::Random({n, 5}, 2 * n)};
    EXPECT_EQ(testing::DiffFromReference(**fn, trace, in, ops::OpTolerance(ir::OpKind::kMul, 1)), "");
  }
}

// A sliced symbolic dim as a matmul's rows, a row op's row length and a reduced axis.
TEST_F(SymbolicSlice, SlicedDimsFeedEveryKernelKind) {
  const TraceFn trace = [](std::span<const Value> v) {
    Value rows = slice(v[0], 0, 1, 50, 2);    // [ceil((min(n,50)-1)/2), n]
    Value cols = slice(v[0], 1, -6, kToEnd);  // [n, min(n, 6)]
    return std::vector<Value>{matmul(rows, v[0]), softmax(cols), reduce_sum(cols, 1),
                              reduce_max(rows, 0)};
  };
  Dim n("n", 1, 4096);
  auto fn = rt_->JitTraced("kinds", 1, trace, {.dynamic = {{0, 0, n}, {0, 1, n}}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  for (int64_t size : {1, 2, 3, 6, 7, 19, 64, 120}) {
    SCOPED_TRACE(size);
    const std::vector<HostTensor> in = {HostTensor::Random({size, size}, size)};
    EXPECT_EQ(testing::DiffFromReference(**fn, trace, in, ops::OpTolerance(ir::OpKind::kMatMul, size)), "");
  }
}

// OutputShapes answers with the call's lengths, before anything is compiled.
TEST_F(SymbolicSlice, OutputShapesFollowTheCall) {
  std::unique_ptr<Function> fn = RowsFunction(*rt_, SliceRows(2, 40, 7));
  ASSERT_NE(fn, nullptr);
  absl::StatusOr<std::vector<std::vector<int64_t>>> shapes = fn->OutputShapes({{3, 4}});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ(*shapes, (std::vector<std::vector<int64_t>>{{1, 4}}));
  shapes = fn->OutputShapes({{1000, 4}});
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_EQ(*shapes, (std::vector<std::vector<int64_t>>{{6, 4}}));
}

// A variant traced when an undeclared dim changes derives its slices' symbols afresh.
TEST_F(SymbolicSlice, AutomaticDynamicVariantDerivesAgain) {
  const TraceFn trace = [](std::span<const Value> v) {
    return std::vector<Value>{reduce_sum(slice(v[0], 0, -5, 40, 2), 0, true) + v[0],
                              slice(v[0], 1, 1, kToEnd, 2)};
  };
  Dim rows("rows", 1, 4096);
  auto fn = rt_->JitTraced("auto_variant", 1, trace, {.dynamic = {{0, 0, rows}}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{9, 4}, {3, 4}, {9, 6}, {2, 7}, {60, 2}, {1, 1}}) {
    SCOPED_TRACE(absl::StrCat(shape[0], "x", shape[1]));
    const std::vector<HostTensor> in = {HostTensor::Random(shape, shape[0] * 10 + shape[1])};
    EXPECT_EQ(testing::DiffFromReference(**fn, trace, in, ops::OpTolerance(ir::OpKind::kReduceSum, shape[0])), "");
  }
  EXPECT_EQ((*fn)->stats().traces, 2);  // cols static at 4, then symbolic
}

// The tuner checks candidates at sizes it picks per shape class: derived lengths follow them.
TEST(SymbolicSliceTuning, CandidatesAreCheckedAtDerivedLengths) {
  RuntimeOptions o;
  o.tuning.mode = TuningMode::kBlocking;
  o.tuning.trials_per_kernel = 3;
  o.tuning.seed = 3;
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(o);
  ASSERT_NE(rt, nullptr);
  const TraceFn trace = [](std::span<const Value> v) {
    return std::vector<Value>{softmax(matmul(slice(v[0], 0, -40, 37, 3), v[1]))};
  };
  Dim rows("rows", 1, 4096);
  auto fn = rt->JitTraced("tuned_slice", 2, trace, {.dynamic = {{0, 0, rows}}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  const std::vector<HostTensor> in = {HostTensor::Random({50, 8}, 1),
                                      HostTensor::Random({8, 24}, 2)};
  EXPECT_EQ(testing::DiffFromReference(**fn, trace, in, ops::OpTolerance(ir::OpKind::kMatMul, 8)), "");
  const std::vector<KernelTuning> results = rt->tuning_results();
  ASSERT_FALSE(results.empty());
  for (const KernelTuning& r : results) {
    EXPECT_EQ(r.ended, "completed") << r.kernel;
    EXPECT_EQ(r.failed, 0) << r.kernel;
    EXPECT_GE(r.trials, 1) << r.kernel;
  }
}

}  // namespace
}  // namespace pto
