// The data tuning candidates are checked on: i32 inputs drawn within what they index, and the
// comparison with the reference (a fixed tolerance, widened to 4x a correct plan's error per
// output; i32 outputs exact; NaN only where the reference has NaN).
#include "jit/tuning/tuning_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/trace.h"
#include "pto/value.h"

namespace pto::jit {
namespace {

using ::testing::HasSubstr;

ir::Graph TraceOf(const TraceFn& fn, std::vector<TraceInput> inputs) {
  absl::StatusOr<ir::Graph> g = Trace(fn, inputs, {});
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : ir::Graph{};
}

TraceInput Input(std::vector<int64_t> dims, ir::DType dtype = ir::DType::kF32) {
  TraceInput in;
  for (int64_t d : dims) in.shape.push_back(ir::SymExpr(d));
  in.dtype = dtype;
  return in;
}

// The smallest extent an i32 input indexes bounds its values: gather's axis (through a
// reshape) and one_hot's depth; an input that indexes nothing gets values in [0, 8).
TEST(TuningData, IndicesStayWithinWhatTheyIndex) {
  const ir::Graph g = TraceOf(
      [](std::span<const Value> v) {
        return std::vector<Value>{gather(v[0], reshape(v[1], {50}), 1), one_hot(v[1], 7), v[2] * 2};
      },
      {Input({3, 11}), Input({5, 10}, ir::DType::kI32), Input({300}, ir::DType::kI32)});
  absl::StatusOr<ProgramData> data = MakeProgramData(g, LoweredProgram{}, {}, 5, false);
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->inputs.size(), 3u);
  EXPECT_EQ(data->inputs[0].dtype, ir::DType::kF32);
  EXPECT_TRUE(data->raw_inputs[0].empty());
  for (int i : {1, 2}) {
    EXPECT_EQ(data->inputs[i].dtype, ir::DType::kI32);
    EXPECT_EQ(data->raw_inputs[i], data->inputs[i].I32Values());
    EXPECT_EQ(data->InputBuffer(i), data->raw_inputs[i].data());
  }
  const std::vector<int32_t>& labels = data->raw_inputs[1];
  EXPECT_EQ(*std::min_element(labels.begin(), labels.end()), 0);
  EXPECT_EQ(*std::max_element(labels.begin(), labels.end()), 6);  // one_hot's 7 < gather's 11
  const std::vector<int32_t>& free = data->raw_inputs[2];
  EXPECT_EQ(*std::min_element(free.begin(), free.end()), 0);
  EXPECT_EQ(*std::max_element(free.begin(), free.end()), 7);
}

ProgramData Outputs(std::vector<float> got, std::vector<float> want) {
  ProgramData d;
  d.tolerance = 1e-3;
  const int64_t n = static_cast<int64_t>(want.size());
  d.outputs.push_back(ops::HostTensor{{n}, std::move(got)});
  d.expected.push_back(ops::HostTensor{{n}, std::move(want)});
  return d;
}

TEST(TuningData, ErrorsAreRelativeToTheOutputsLargestMagnitude) {
  ProgramData d = Outputs({100.0f, 1.05f}, {100.0f, 1.0f});
  EXPECT_NEAR(OutputErrors(d)[0], 0.05 / 100, 1e-7);
  EXPECT_TRUE(CompareOutputs(d).ok());
  d.outputs[0].data[1] = 1.2f;  // 0.2 / 100 = 2e-3 > 1e-3
  const absl::Status s = CompareOutputs(d);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("wrong answer: output 0 element 1 is 1.2, the reference "
                                     "says 1 (tolerance 0.1)"));
}

TEST(TuningData, NanMatchesOnlyNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ProgramData d = Outputs({nan, 2.0f}, {nan, 2.0f});
  EXPECT_EQ(OutputErrors(d)[0], 0);
  EXPECT_TRUE(CompareOutputs(d).ok());
  d.outputs[0].data[1] = nan;
  EXPECT_TRUE(std::isinf(OutputErrors(d)[0]));
  EXPECT_THAT(CompareOutputs(d).message(), HasSubstr("element 1 is nan"));
}

// A program that amplifies rounding (here: a correct plan 1% off) lets a candidate be off by
// up to 4x that, per output; a well-conditioned output keeps the fixed tolerance.
TEST(TuningData, ABaselineWidensOnlyItsOwnOutput) {
  ProgramData d = Outputs({1.03f, 1.0f}, {1.0f, 1.0f});
  d.outputs.push_back(ops::HostTensor{{1}, {1.01f}});
  d.expected.push_back(ops::HostTensor{{1}, {1.0f}});
  EXPECT_FALSE(CompareOutputs(d).ok());
  d.baseline_errors = {0.01, 0.0};
  EXPECT_NEAR(CheckTolerance(d, 0), 0.04, 1e-12);
  EXPECT_EQ(CheckTolerance(d, 1), 1e-3);
  const absl::Status s = CompareOutputs(d);  // output 0 passes, output 1 does not
  EXPECT_THAT(s.message(), HasSubstr("wrong answer: output 1 element 0 is 1.01"));
  d.outputs[1].data[0] = 1.0f;
  EXPECT_TRUE(CompareOutputs(d).ok());
  d.outputs[0].data[0] = 1.05f;  // 5% > 4 x 1%
  EXPECT_THAT(CompareOutputs(d).message(), HasSubstr("output 0 element 0 is 1.05"));
}

// An i32 output (its int32 bit patterns in the output buffer) is compared exactly.
TEST(TuningData, IntegerOutputsAreExact) {
  ProgramData d;
  d.tolerance = 0.5;
  d.baseline_errors = {0.5};
  d.expected.push_back(ops::HostTensor::I32({3}, {4, -2, 7}));
  std::vector<float> bits(3);
  const int32_t got[] = {4, -2, 8};
  std::memcpy(bits.data(), got, sizeof(got));
  d.outputs.push_back(ops::HostTensor{{3}, bits});
  EXPECT_TRUE(std::isinf(OutputErrors(d)[0]));
  EXPECT_EQ(CompareOutputs(d).message(),
            "wrong answer: output 0 element 2 is 8, the reference says 7");
  const int32_t right[] = {4, -2, 7};
  std::memcpy(d.outputs[0].data.data(), right, sizeof(right));
  EXPECT_TRUE(CompareOutputs(d).ok());
}

}  // namespace
}  // namespace pto::jit
