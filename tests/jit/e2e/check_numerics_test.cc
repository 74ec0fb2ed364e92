// FunctionOptions::check_numerics end to end: the first NaN or infinity a call computes fails
// it, naming the input, or the kernel, its buffer, node, element and the op that produced it;
// clean calls are unchanged; with checking off nothing is scanned.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

constexpr float kInf = std::numeric_limits<float>::infinity();

FunctionOptions Checking() {
  FunctionOptions o;
  o.check_numerics = true;
  return o;
}

// A checked call of `trace` on `inputs` (one output of `out_shape`): its status, and the names
// of the kernels it runs (profiled by an unchecked Function of the same program: the same
// kernels).
struct CheckedRun {
  std::vector<std::string> kernels;
  absl::Status status;
};

CheckedRun RunChecked(Runtime& rt, const TraceFn& trace, const std::vector<HostTensor>& inputs,
                      const std::vector<int64_t>& out_shape) {
  CheckedRun run;
  const int n = static_cast<int>(inputs.size());
  auto plain = rt.JitTraced("plain", n, trace, {});
  auto checked = rt.JitTraced("checked", n, trace, Checking());
  EXPECT_TRUE(plain.ok() && checked.ok());
  std::vector<float> out(ops::NumElements(out_shape));
  const TensorView view = TensorView::Dense(out.data(), out_shape);
  absl::StatusOr<std::vector<KernelProfile>> p =
      (*plain)->Profile(testing::Views(inputs), {&view, 1}, 1);
  EXPECT_TRUE(p.ok()) << p.status();
  for (const KernelProfile& k : *p) run.kernels.push_back(k.kernel);
  run.status = (**checked)(testing::Views(inputs), {&view, 1});
  return run;
}

TraceFn LogChain() {
  return
      [](std::span<const Value> in) -> std::vector<Value> { return {log(in[0]) * in[1] + 1.0f}; };
}

TEST(CheckNumerics, NanInTheMiddleOfAFusedKernelNamesKernelOutputElementAndOp) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  HostTensor x = HostTensor::Random({2, 4}, 1, 0.5f, 2.0f);
  x.data[6] = -3.0f;  // log(-3) is nan
  const std::vector<HostTensor> inputs = {x, HostTensor::Random({2, 4}, 2)};
  const CheckedRun r = RunChecked(*rt, LogChain(), inputs, {2, 4});
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status.message(),
            "check_numerics: kernel " + r.kernels[0] +
                " wrote nan to output 0 (node 5, add) at element 6 [1, 2]; first produced by "
                "node 2 (log): nan at its element 6 [1, 2] when the kernel's ops are re-run "
                "through the reference");
}

TraceFn LogThenMatMul() {
  return
      [](std::span<const Value> in) -> std::vector<Value> { return {matmul(log(in[0]), in[1])}; };
}

TEST(CheckNumerics, AnIntermediateIsNamedByItsNode) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  HostTensor x = HostTensor::Random({4, 8}, 3, 0.5f, 2.0f);
  x.data[13] = 0.0f;  // log(0) is -inf
  const std::vector<HostTensor> inputs = {x, HostTensor::Random({8, 16}, 4)};
  const CheckedRun r = RunChecked(*rt, LogThenMatMul(), inputs, {4, 16});
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status.message(),
            "check_numerics: kernel " + r.kernels[0] +
                " wrote -inf to an intermediate (node 2, log) at element 13 [1, 5]; first "
                "produced by node 2 (log): -inf at its element 13 [1, 5] when the kernel's ops "
                "are re-run through the reference");
}

// a = x * w has two users; the second, log(a) - sum(a), reads it last, elementwise, and is
// written over it (jit/passes/mark_in_place.h) before the matmul reads it. The re-run
// recomputes a: read from the buffer, it would be log(a) - sum(a), negative, and log of it nan
// from element 0 on.
TraceFn LogInPlace() {
  return [](std::span<const Value> in) -> std::vector<Value> {
    // One statement per node: the order of a call's arguments is the compiler's, and it
    // numbers the nodes.
    Value a = in[0] * in[1];
    Value l = log(a);
    Value sum = reduce_sum(a, -1, true);
    return {matmul(l - sum, in[2])};
  };
}

TEST(CheckNumerics, AKernelWritingInPlaceIsReRunOnTheValuesItOverwrote) {
  absl::StatusOr<jit::LoweredProgram> lowered =
      testing::LowerStatic(LogInPlace(), {{4, 8}, {4, 8}, {8, 4}});
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  ASSERT_EQ(lowered->tiles.calls.size(), 4u);
  ASSERT_EQ(lowered->tiles.calls[2].in_place.size(), 1u);
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  HostTensor w = HostTensor::Filled({4, 8}, 0.5f);
  w.data[3] = -0.5f;  // log(a) is nan at element 3
  const std::vector<HostTensor> inputs = {HostTensor::Filled({4, 8}, 1.0f), w,
                                          HostTensor::Random({8, 4}, 5)};
  const CheckedRun r = RunChecked(*rt, LogInPlace(), inputs, {4, 4});
  ASSERT_EQ(r.kernels.size(), 4u);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(r.status.message()),
            "check_numerics: kernel " + r.kernels[2] +
                " wrote nan to an intermediate (node 6, sub) at element 3 [0, 3]; first "
                "produced by node 4 (log): nan at its element 3 [0, 3] when the kernel's ops "
                "are re-run through the reference");
}

TEST(CheckNumerics, AnInputHoldingInfIsNamedBeforeAnyKernel) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->JitTraced("log_chain", 2, LogChain(), Checking());
  ASSERT_TRUE(fn.ok());
  HostTensor y = HostTensor::Random({2, 4}, 2);
  y.data[5] = kInf;
  absl::StatusOr<std::vector<HostTensor>> r =
      testing::RunPto(**fn, {HostTensor::Random({2, 4}, 1, 0.5f, 2.0f), y});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "check_numerics: input 1 holds inf at element 5 [1, 1]");
}

// A constant input is scanned when its copy is made: a refreshed copy holding inf fails.
TEST(CheckNumerics, AConstantInputIsScannedWhenItsCopyIsMade) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  FunctionOptions o = Checking();
  o.constant_inputs = {1};
  auto fn = rt->JitTraced("log_chain", 2, LogChain(), o);
  ASSERT_TRUE(fn.ok());
  std::vector<HostTensor> inputs = {HostTensor::Random({2, 4}, 1, 0.5f, 2.0f),
                                    HostTensor::Random({2, 4}, 2)};
  const std::vector<TensorView> views = testing::Views(inputs);
  std::vector<float> out(8);
  const TensorView out_view = TensorView::Dense(out.data(), {2, 4});
  ASSERT_TRUE((**fn)(views, {&out_view, 1}).ok());
  inputs[1].data[7] = -kInf;  // the Function still holds its copy of the finite values
  ASSERT_TRUE((**fn)(views, {&out_view, 1}).ok());
  (*fn)->InvalidateConstants();
  absl::Status s = (**fn)(views, {&out_view, 1});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "check_numerics: input 1 holds -inf at element 7 [1, 3]");
}

TraceFn Block() {
  return [](std::span<const Value> in) -> std::vector<Value> {
    Value h = softmax(matmul(in[0], in[1]) * 0.125f);
    return {layer_norm(matmul(h, in[2]) + in[0], in[3], in[4]), gelu(h)};
  };
}

TEST(CheckNumerics, ACleanProgramGivesTheSameResultsChecked) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  const std::vector<HostTensor> inputs = {
      HostTensor::Random({16, 32}, 1), HostTensor::Random({32, 24}, 2),
      HostTensor::Random({24, 32}, 3), HostTensor::Random({32}, 4), HostTensor::Random({32}, 5)};
  auto plain = rt->JitTraced("block", 5, Block(), {});
  auto checked = rt->JitTraced("block", 5, Block(), Checking());
  ASSERT_TRUE(plain.ok() && checked.ok());
  absl::StatusOr<std::vector<HostTensor>> want = testing::RunPto(**plain, inputs);
  absl::StatusOr<std::vector<HostTensor>> got = testing::RunPto(**checked, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  for (size_t o = 0; o < got->size(); ++o) EXPECT_EQ((*got)[o].data, (*want)[o].data) << o;
}

TEST(CheckNumerics, OffNothingIsScanned) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->JitTraced("log_chain", 2, LogChain(), {});
  ASSERT_TRUE(fn.ok());
  HostTensor x = HostTensor::Random({2, 4}, 1, 0.5f, 2.0f);
  x.data[0] = std::nanf("");
  x.data[6] = -3.0f;
  absl::StatusOr<std::vector<HostTensor>> r =
      testing::RunPto(**fn, {x, HostTensor::Random({2, 4}, 2)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(std::isnan((*r)[0].data[0]));
  EXPECT_TRUE(std::isnan((*r)[0].data[6]));
}

TEST(CheckNumerics, RuntimeOptionsTurnItOnForEveryFunction) {
  RuntimeOptions options;
  options.check_numerics = true;
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(options);
  auto fn = rt->JitTraced("log_chain", 2, LogChain(), {});
  ASSERT_TRUE(fn.ok());
  HostTensor x = HostTensor::Random({2, 4}, 1, 0.5f, 2.0f);
  x.data[3] = -kInf;
  absl::StatusOr<std::vector<HostTensor>> r =
      testing::RunPto(**fn, {x, HostTensor::Random({2, 4}, 2)});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "check_numerics: input 0 holds -inf at element 3 [0, 3]");
}

}  // namespace
}  // namespace pto
