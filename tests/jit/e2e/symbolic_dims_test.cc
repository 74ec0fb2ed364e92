// Every shape rule on symbolic dims at the edges of their ranges: each program runs with its
// symbol `n` (declared in [0, 40]) at 0, 1, a size inside and the largest, compiled by pto and
// compared with the ops/ reference; and a declared range is enforced at its bounds.
#include <cstdint>
#include <functional>
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

constexpr int64_t kN = -1;  // in a shape: the symbol n
constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

struct RuleCase {
  std::string name;
  std::vector<std::vector<int64_t>> shapes;  // kN marks the dims that are n
  std::function<std::vector<Value>(std::span<const Value>)> fn;
  ir::OpKind kind = ir::OpKind::kAdd;  // for the tolerance
};

std::vector<RuleCase> Cases() {
  using V = std::span<const Value>;
  using Out = std::vector<Value>;
  return {
      {"unary", {{kN, 3}}, [](V v) { return Out{pto::exp(v[0])}; }, ir::OpKind::kExp},
      {"same_symbol", {{kN}, {kN}}, [](V v) { return Out{v[0] * v[1]}; }},
      {"broadcast_rows", {{kN, 3}, {1, 3}}, [](V v) { return Out{v[0] - v[1]}; }},
      {"broadcast_outer", {{kN, 1}, {1, kN}}, [](V v) { return Out{v[0] + v[1]}; }},
      {"broadcast_scalar", {{kN, 2}}, [](V v) { return Out{2.0f * v[0] + 1.0f}; }},
      {"reduce_sum_axis1",
       {{3, kN}},
       [](V v) { return Out{reduce_sum(v[0], 1)}; },
       ir::OpKind::kReduceSum},
      {"reduce_max_axis0_keep",
       {{kN, 3}},
       [](V v) { return Out{reduce_max(v[0], 0, true)}; },
       ir::OpKind::kReduceMax},
      {"reduce_mean_axis1_keep",
       {{2, kN}},
       [](V v) { return Out{reduce_mean(v[0], 1, true)}; },
       ir::OpKind::kReduceMean},
      {"reduce_mean_axis0",
       {{kN, 4}},
       [](V v) { return Out{reduce_mean(v[0], 0)}; },
       ir::OpKind::kReduceMean},
      {"softmax_rows", {{kN, 5}}, [](V v) { return Out{softmax(v[0])}; }, ir::OpKind::kSoftmax},
      {"softmax_row_length",
       {{3, kN}},
       [](V v) { return Out{softmax(v[0])}; },
       ir::OpKind::kSoftmax},
      {"log_softmax_row_length",
       {{2, kN}},
       [](V v) { return Out{log_softmax(v[0])}; },
       ir::OpKind::kLogSoftmax},
      {"layer_norm_row_length",
       {{2, kN}, {kN}, {kN}},
       [](V v) { return Out{layer_norm(v[0], v[1], v[2])}; },
       ir::OpKind::kLayerNorm},
      {"rms_norm_rows",
       {{kN, 6}, {6}},
       [](V v) { return Out{rms_norm(v[0], v[1])}; },
       ir::OpKind::kRmsNorm},
      {"matmul_m",
       {{kN, 5}, {5, 4}},
       [](V v) { return Out{matmul(v[0], v[1])}; },
       ir::OpKind::kMatMul},
      {"matmul_k",
       {{3, kN}, {kN, 4}},
       [](V v) { return Out{matmul(v[0], v[1])}; },
       ir::OpKind::kMatMul},
      {"matmul_n_transposed",
       {{3, 5}, {kN, 5}},
       [](V v) { return Out{matmul(v[0], v[1], {.transpose_b = true})}; },
       ir::OpKind::kMatMul},
      {"matmul_batch",
       {{kN, 3, 5}, {5, 2}},
       [](V v) { return Out{matmul(v[0], v[1]) + 1.0f}; },
       ir::OpKind::kMatMul},
      {"transpose",
       {{kN, 3, 2}},
       [](V v) {
         return Out{transpose(v[0], {2, 0, 1}) * 3.0f};
       }},
      {"reshape_infer",
       {{kN, 6}},
       [](V v) {
         return Out{reshape(v[0], {-1, 3}) + 1.0f};
       }},
      {"reshape_copy_dim",
       {{kN, 6}},
       [](V v) {
         return Out{reshape(v[0], {0, 2, 3})};
       }},
      {"reshape_of_transpose",
       {{kN, 2}},
       [](V v) { return Out{reshape(transpose(v[0], 0, 1), {-1})}; }},
      {"concat_symbolic_axis",
       {{kN, 3}, {2, 3}},
       [](V v) {
         return Out{concat({v[0], v[1]}, 0)};
       }},
      {"concat_other_axis",
       {{kN, 3}, {kN, 1}},
       [](V v) {
         return Out{concat({v[0], v[1]}, 1)};
       }},
      {"slice_tail", {{kN, 3}}, [](V v) { return Out{slice(v[0], 0, -2, kToEnd) + 1.0f}; }},
      {"slice_step", {{kN, 3}}, [](V v) { return Out{slice(v[0], 0, 1, 30, 4) + 1.0f}; }},
      {"slice_columns_softmax",
       {{2, kN}},
       [](V v) { return Out{softmax(slice(v[0], 1, 1, -1))}; },
       ir::OpKind::kSoftmax},
  };
}

class SymbolicDims : public ::testing::Test {
 protected:
  void SetUp() override {
    rt_ = testing::OpenRuntime();
    ASSERT_NE(rt_, nullptr);
  }
  std::unique_ptr<Runtime> rt_;
};

TEST_F(SymbolicDims, EveryRuleAtZeroOneAndItsRangeBounds) {
  Dim n("n", 0, 40);
  int checked = 0;
  for (const RuleCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    FunctionOptions options;
    for (size_t i = 0; i < c.shapes.size(); ++i) {
      for (size_t d = 0; d < c.shapes[i].size(); ++d) {
        if (c.shapes[i][d] == kN)
          options.dynamic.push_back({static_cast<int>(i), static_cast<int>(d), n});
      }
    }
    const TraceFn trace = c.fn;
    absl::StatusOr<std::unique_ptr<Function>> fn =
        rt_->JitTraced(c.name, static_cast<int>(c.shapes.size()), trace, options);
    ASSERT_TRUE(fn.ok()) << fn.status();
    for (int64_t value : {0, 1, 3, 40}) {
      SCOPED_TRACE(absl::StrCat("n = ", value));
      std::vector<HostTensor> in;
      for (size_t i = 0; i < c.shapes.size(); ++i) {
        std::vector<int64_t> shape = c.shapes[i];
        for (int64_t& d : shape) d = d == kN ? value : d;
        in.push_back(HostTensor::Random(shape, 100 * value + i,
                                        c.kind == ir::OpKind::kLog ? 0.1f : -2.0f, 2.0f));
      }
      EXPECT_EQ(testing::DiffFromReference(**fn, trace, in,
                                           ops::OpTolerance(c.kind, std::max<int64_t>(value, 6))),
                "");
      ++checked;
    }
  }
  EXPECT_EQ(checked, static_cast<int>(Cases().size()) * 4);
}

// A declared range holds at its bounds, and a size outside it is InvalidArgument.
TEST_F(SymbolicDims, DeclaredRangeBounds) {
  Dim n("n", 2, 6);
  const TraceFn trace = [](std::span<const Value> v) {
    return std::vector<Value>{slice(v[0], 0, -3, kToEnd) + 1.0f};
  };
  auto fn = rt_->JitTraced("range", 1, trace, {.dynamic = {{0, 0, n}}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  for (int64_t value : {2, 6}) {
    const std::vector<HostTensor> in = {HostTensor::Random({value, 3}, value)};
    EXPECT_EQ(testing::DiffFromReference(**fn, trace, in, ops::OpTolerance(ir::OpKind::kAdd, 1)), "");
  }
  for (int64_t value : {0, 1, 7}) {
    absl::StatusOr<std::vector<HostTensor>> got =
        testing::RunPto(**fn, {HostTensor::Random({value, 3}, 1)});
    ASSERT_FALSE(got.ok()) << value;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(),
                HasSubstr(absl::StrCat("input 0 dim 0 (n) is ", value,
                                       ", outside the declared range [2, 6]")));
  }
}

// reshape's -1 cannot be inferred when the other sizes multiply to 0 (numpy: any size would
// fit): a symbolic divisor that may be 0 is checked at each call.
TEST_F(SymbolicDims, ReshapeInferenceRejectsAZeroDivisorAtTheCall) {
  Dim n("n", 0, 40);
  const TraceFn trace = [](std::span<const Value> v) {
    return std::vector<Value>{reshape(v[0], {0, -1}) + 1.0f};
  };
  auto fn = rt_->JitTraced("flatten_rows", 1, trace, {.dynamic = {{0, 0, n}}});
  ASSERT_TRUE(fn.ok()) << fn.status();
  const std::string message =
      "reshape: spec [0, -1] for input 0 shape [n, 2, 3] cannot infer -1 when n is 0, since any "
      "size would fit (it is 0 at this call)";
  absl::StatusOr<std::vector<HostTensor>> got =
      testing::RunPto(**fn, {HostTensor::Random({0, 2, 3}, 1)});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(), message);
  std::vector<float> empty;
  std::vector<float> out;
  absl::Status s = (*fn)->Call({TensorView::Dense(empty.data(), {0, 2, 3})},
                               {TensorView::Dense(out.data(), {0, 6})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), message);
  // The reference and a static trace reject it too; other sizes run.
  EXPECT_FALSE(testing::RunReference(trace, {HostTensor::Random({0, 2, 3}, 1)}).ok());
  for (int64_t value : {1, 3, 40}) {
    EXPECT_EQ(testing::DiffFromReference(**fn, trace, {HostTensor::Random({value, 2, 3}, value)},
                                         ops::OpTolerance(ir::OpKind::kAdd, 1)),
              "");
  }
}

// Automatic dynamic dims (range [0, 2^40]) take 0 as well.
TEST_F(SymbolicDims, AutomaticDynamicDimReachesZero) {
  const TraceFn trace = [](std::span<const Value> v) {
    return std::vector<Value>{reduce_sum(slice(v[0], 1, 1, kToEnd, 2), 1)};
  };
  auto fn = rt_->JitTraced("auto", 1, trace, {});
  ASSERT_TRUE(fn.ok()) << fn.status();
  for (int64_t value : {5, 8, 0, 1, 2, 33}) {
    SCOPED_TRACE(value);
    const std::vector<HostTensor> in = {HostTensor::Random({2, value}, value)};
    EXPECT_EQ(testing::DiffFromReference(**fn, trace, in, ops::OpTolerance(ir::OpKind::kReduceSum, value)), "");
  }
  EXPECT_EQ((*fn)->stats().traces, 2);  // static at 5, then one symbolic variant
}

}  // namespace
}  // namespace pto
