// FunctionOptions::check_numerics end to end: the first NaN or infinity a call computes fails
// it, naming the input, or the kernel, its buffer, node, element and the op that produced it;
// clean calls are unchanged; with checking off nothing is scanned.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
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

// The names of the kernels `trace` runs on `inputs` (a Function of its own, unchecked).
std::vector<std::string> KernelNames(Runtime& rt, const TraceFn& trace,
                                     const std::vector<HostTensor>& inputs,
                                     const std::vector<std::vector<int64_t>>& out_shapes) {
  auto fn = rt.JitTraced("names", static_cast<int>(inputs.size()), trace, {});
  EXPECT_TRUE(fn.ok());
  std::vector<std::vector<float>> out;
  std::vector<TensorView> views;
  for (const auto& s : out_shapes) {
    out.emplace_back(ops::NumElements(s));
    views.push_back(TensorView::Dense(out.back().data(), s));
  }
  absl::StatusOr<std::vector<KernelProfile>> p = (*fn)->Profile(testing::Views(inputs), views, 1);
  EXPECT_TRUE(p.ok()) << p.status();
  std::vector<std::string> names;
  for (const KernelProfile& k : *p) names.push_back(k.kernel);
  return names;
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
  const std::vector<std::string> names = KernelNames(*rt, LogChain(), inputs, {{2, 4}});
  ASSERT_EQ(names.size(), 1u);
  auto fn = rt->JitTraced("log_chain", 2, LogChain(), Checking());
  ASSERT_TRUE(fn.ok());
  absl::StatusOr<std::vector<HostTensor>> r = testing::RunPto(**fn, inputs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "check_numerics: kernel " + names[0] +
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
  const std::vector<std::string> names = KernelNames(*rt, LogThenMatMul(), inputs, {{4, 16}});
  ASSERT_EQ(names.size(), 2u);
  auto fn = rt->JitTraced("log_matmul", 2, LogThenMatMul(), Checking());
  ASSERT_TRUE(fn.ok());
  absl::StatusOr<std::vector<HostTensor>> r = testing::RunPto(**fn, inputs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "check_numerics: kernel " + names[0] +
                " wrote -inf to an intermediate (node 2, log) at element 13 [1, 5]; first "
                "produced by node 2 (log): -inf at its element 13 [1, 5] when the kernel's ops "
                "are re-run through the reference");
}

// a = x * w has two users; the second, log(a) - sum(a), reads it last, elementwise, and is
// written over it (jit/passes/mark_in_place.h) before the matmul reads it.
TraceFn LogInPlace() {
  return [](std::span<const Value> in) -> std::vector<Value> {
    Value a = in[0] * in[1];
    return {matmul(log(a) - reduce_sum(a, -1, true), in[2])};
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
  const std::vector<std::string> names = KernelNames(*rt, LogInPlace(), inputs, {{4, 4}});
  ASSERT_EQ(names.size(), 4u);
  auto fn = rt->JitTraced("log_in_place", 3, LogInPlace(), Checking());
  ASSERT_TRUE(fn.ok());
  absl::StatusOr<std::vector<HostTensor>> r = testing::RunPto(**fn, inputs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "check_numerics: kernel " + names[2] +
                " wrote nan to an intermediate (node 6, sub) at element 3 [0, 3]; first "
                "produced by node 5 (log): nan at its element 3 [0, 3] when the kernel's ops "
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

// Sets an environment variable for a scope (unset: nullptr), restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_.has_value()) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CheckNumerics, FromEnvironmentReadsPtoCheckNumerics) {
  {
    ScopedEnv unset("PTO_CHECK_NUMERICS", nullptr);
    absl::StatusOr<RuntimeOptions> o = RuntimeOptions::FromEnvironment();
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_FALSE(o->check_numerics);
  }
  for (const auto& [text, on] : std::vector<std::pair<const char*, bool>>{
           {"1", true}, {"true", true}, {"TRUE", true}, {"0", false}, {"false", false}}) {
    ScopedEnv set("PTO_CHECK_NUMERICS", text);
    absl::StatusOr<RuntimeOptions> o = RuntimeOptions::FromEnvironment();
    ASSERT_TRUE(o.ok()) << text;
    EXPECT_EQ(o->check_numerics, on) << text;
  }
  ScopedEnv bad("PTO_CHECK_NUMERICS", "yes");
  absl::StatusOr<RuntimeOptions> o = RuntimeOptions::FromEnvironment();
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(o.status().message(),
            "PTO_CHECK_NUMERICS must be one of 1, 0, true or false; got 'yes'");
}

}  // namespace
}  // namespace pto
