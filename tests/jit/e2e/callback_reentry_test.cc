// Code pto calls back (the traced lambda, the log sink, the tuning progress callback) calling
// into the Runtime: refused with FailedPrecondition where it could wait for pto's own work,
// allowed for read-only queries and StopTuning, and never a deadlock. Every call that could
// hang runs under testing::WithDeadline, so a regression fails instead of hanging ctest.
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/deadline.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ::testing::HasSubstr;

// Runs `fn` on [4] of ones into `out`.
absl::Status CallOnFour(Function& fn, std::vector<float>& out) {
  static const std::vector<float> kOnes(4, 1.0f);
  out.assign(4, 0.0f);
  return fn.Call({TensorView::Dense(kOnes.data(), {4})}, {TensorView::Dense(out.data(), {4})});
}

TEST(CallbackReentry, ALambdaCallingItsOwnFunctionIsRefusedNotDeadlocked) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  Function* self = nullptr;
  std::vector<float> inner_out;
  absl::Status inner;
  auto fn = rt->Jit("recursive", [&](Value x) {
    inner = CallOnFour(*self, inner_out);
    return x * 2.0f;
  });
  ASSERT_TRUE(fn.ok()) << fn.status();
  self = fn->get();
  std::vector<float> out;
  const absl::Status outer = testing::WithDeadline("a Function called from its own lambda",
                                                   [&] { return CallOnFour(*self, out); });
  EXPECT_EQ(inner.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(inner.message(),
              HasSubstr("function 'recursive' was called from inside its own traced lambda"));
  // The trace fails with it: the lambda dropping the status does not hide the mistake.
  EXPECT_EQ(outer, inner);
}

TEST(CallbackReentry, ALambdaCallingAnotherFunctionOrJitIsRefused) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto helper = rt->Jit("helper", [](Value x) { return x + 1.0f; });
  ASSERT_TRUE(helper.ok());
  std::vector<float> out;
  ASSERT_TRUE(CallOnFour(**helper, out).ok());  // compiled: refused all the same
  absl::Status nested_call, nested_jit;
  auto fn = rt->Jit("outer", [&](Value x) {
    std::vector<float> scratch;
    nested_call = CallOnFour(**helper, scratch);
    nested_jit = rt->Jit("made_inside", [](Value y) { return y; }).status();
    return x * 2.0f;
  });
  ASSERT_TRUE(fn.ok());
  const absl::Status outer = testing::WithDeadline("a Function called from another's lambda",
                                                   [&] { return CallOnFour(**fn, out); });
  EXPECT_EQ(nested_call.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(nested_call.message(),
              HasSubstr("function 'helper' was called from inside the traced lambda of 'outer'"));
  EXPECT_EQ(nested_jit.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(nested_jit.message(),
              HasSubstr("Runtime::Jit of function 'made_inside' was called from inside the "
                        "traced lambda of 'outer'"));
  EXPECT_EQ(outer, nested_call);  // the first refusal fails the trace
  // Outside the lambda both work.
  ASSERT_TRUE(CallOnFour(**helper, out).ok());
  EXPECT_FLOAT_EQ(out[0], 2.0f);
}

// The sink runs while pto compiles (under the Function's lock): calls that would wait for it
// are refused, queries work.
TEST(CallbackReentry, ALogSinkCallingIntoTheRuntime) {
  std::atomic<Runtime*> runtime{nullptr};
  std::atomic<Function*> function{nullptr};
  std::mutex mu;
  std::vector<absl::Status> calls, workloads, jits;
  int stats_read = 0;
  RuntimeOptions options;
  options.log_level = LogLevel::kInfo;  // "compiled ..." is logged under the Function's lock
  options.record_workload = true;
  options.log_sink = [&](LogLevel, std::string_view) {
    Runtime* rt = runtime.load();
    Function* fn = function.load();
    if (rt == nullptr || fn == nullptr) return;
    std::vector<float> out;
    absl::Status call = CallOnFour(*fn, out);
    absl::Status workload = rt->WriteWorkload(::testing::TempDir() + "/sink_workload.txt");
    absl::Status jit = rt->Jit("from_sink", [](Value y) { return y; }).status();
    const RuntimeStats stats = rt->stats();  // a query: allowed
    std::lock_guard<std::mutex> lock(mu);
    calls.push_back(call);
    workloads.push_back(workload);
    jits.push_back(jit);
    stats_read += stats.cache.description.empty() ? 0 : 1;
  };
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(options);
  runtime = rt.get();
  auto fn = rt->Jit("logged", [](Value x) { return x * 3.0f; });
  ASSERT_TRUE(fn.ok());
  function = fn->get();
  std::vector<float> out;
  const absl::Status s = testing::WithDeadline("a call whose log sink calls it",
                                               [&] { return CallOnFour(**fn, out); });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_FLOAT_EQ(out[0], 3.0f);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(stats_read, static_cast<int>(calls.size()));
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(calls[i].message(),
                HasSubstr("function 'logged' was called from inside the log sink"));
    EXPECT_EQ(workloads[i].code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(workloads[i].message(),
                HasSubstr("Runtime::WriteWorkload was called from inside the log sink"));
    EXPECT_EQ(jits[i].code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(jits[i].message(), HasSubstr("from inside the log sink"));
  }
}

// A progress callback that stops tuning after its first trial (blocking tuning: the first call
// waits for the jobs, so a StopTuning that waited for them would never return).
TEST(CallbackReentry, AProgressCallbackStopsTuningAndCannotWaitForIt) {
  std::atomic<Runtime*> runtime{nullptr};
  std::atomic<Function*> function{nullptr};
  std::mutex mu;
  absl::Status wait, call;
  int stops = 0;
  size_t results_seen = 0;
  RuntimeOptions options;
  options.tuning.mode = TuningMode::kBlocking;
  options.tuning.trials_per_kernel = 100000;
  options.tuning.seconds_per_kernel = 600;
  options.tuning.progress = [&](const KernelTuning& t) {
    Runtime* rt = runtime.load();
    if (rt == nullptr || t.trials == 0 || t.finished) return;
    std::lock_guard<std::mutex> lock(mu);
    if (stops++ > 0) return;
    wait = rt->WaitForTuning();
    std::vector<float> out;
    call = CallOnFour(*function.load(), out);
    results_seen = rt->tuning_results().size();
    rt->StopTuning();  // asks, returns at once
  };
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(options);
  runtime = rt.get();
  auto fn = rt->Jit("tuned", [](Value a, Value b) { return softmax(matmul(a, b)); });
  ASSERT_TRUE(fn.ok());
  function = fn->get();
  const std::vector<float> a(24 * 40, 0.5f), b(40 * 72, 0.25f);
  std::vector<float> out(24 * 72);
  const absl::Status s = testing::WithDeadline("a call whose progress callback stops tuning", [&] {
    return (**fn)({TensorView::Dense(a.data(), {24, 40}), TensorView::Dense(b.data(), {40, 72})},
                  {TensorView::Dense(out.data(), {24, 72})});
  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_NEAR(out[0], 1.0f / 72, 1e-6);
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_GE(stops, 1);
  EXPECT_EQ(wait.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(wait.message(),
              HasSubstr("Runtime::WaitForTuning was called from inside the tuning progress "
                        "callback"));
  EXPECT_EQ(call.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(call.message(),
              HasSubstr("function 'tuned' was called from inside the tuning progress callback"));
  EXPECT_GE(results_seen, 1u);
  const std::vector<KernelTuning> results = rt->tuning_results();
  ASSERT_FALSE(results.empty());
  for (const KernelTuning& t : results) {
    EXPECT_TRUE(t.finished) << t.kernel;
    EXPECT_EQ(t.ended, "shutdown") << t.kernel;
    EXPECT_LT(t.trials, 100) << t.kernel;
  }
  EXPECT_TRUE(testing::WithDeadline("WaitForTuning", [&] { return rt->WaitForTuning(); }).ok());
}

}  // namespace
}  // namespace pto
