// The persistent kernel cache seen from the Runtime: a second Runtime on the same cache path
// loads every kernel's object code and runs no LLVM code generation (RuntimeStats and the
// per-kernel timing events say so), and applies the cache's tuning records without building a
// search space. Across processes: tests/tools/pto_cli_test.cc; warm start times:
// tools/bench/warm_start.cc.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"
#include "tuner/search_space.h"

namespace pto {
namespace {

using ops::HostTensor;

TEST(WarmStart, SecondRuntimeLoadsEveryKernel) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pto_warm_start_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  TraceFn mlp = [](std::span<const Value> v) {
    return std::vector<Value>{linear(gelu(linear(v[0], v[1], v[2])), v[3], v[4]) + v[0]};
  };
  const std::vector<HostTensor> in = {HostTensor::Random({7, 32}, 1),
                                      HostTensor::Random({64, 32}, 2), HostTensor::Random({64}, 3),
                                      HostTensor::Random({32, 64}, 4), HostTensor::Random({32}, 5)};
  std::vector<HostTensor> cold_out;
  int64_t cold_kernels = 0;
  {
    std::unique_ptr<Runtime> rt = testing::OpenRuntime({.cache_path = dir.string()});
    auto fn = rt->JitTraced("mlp", 5, mlp, {});
    ASSERT_TRUE(fn.ok());
    auto out = testing::RunPto(**fn, in);
    ASSERT_TRUE(out.ok()) << out.status();
    cold_out = *out;
    cold_kernels = (*fn)->stats().kernels_compiled;
    EXPECT_EQ((*fn)->stats().kernels_loaded, 0);
    const RuntimeStats st = rt->stats();
    EXPECT_EQ(st.llvm_codegen_runs, cold_kernels);
    EXPECT_EQ(st.kernels_loaded, 0);
    EXPECT_GT(st.llvm_setup_seconds, 0);
    EXPECT_TRUE(st.cache.persistent);
    EXPECT_EQ(st.cache.role, "writer");
    EXPECT_EQ(st.cache.puts, cold_kernels + 1);  // the kernels and the plan
    const std::vector<KernelEvent> events = rt->kernel_events();
    ASSERT_EQ(static_cast<int64_t>(events.size()), cold_kernels);
    for (const KernelEvent& e : events) {
      EXPECT_FALSE(e.loaded_from_cache) << e.kernel;
      EXPECT_GT(e.seconds, 0) << e.kernel;
      std::cerr << "[ cold     ] " << e.kernel << " compiled in " << e.seconds * 1000 << " ms\n";
    }
  }
  EXPECT_EQ(cold_kernels, 2);
  {
    std::unique_ptr<Runtime> rt = testing::OpenRuntime({.cache_path = dir.string()});
    auto fn = rt->JitTraced("mlp", 5, mlp, {});
    ASSERT_TRUE(fn.ok());
    auto out = testing::RunPto(**fn, in);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*fn)->stats().kernels_compiled, 0);
    EXPECT_EQ((*fn)->stats().kernels_loaded, cold_kernels);
    EXPECT_EQ((*out)[0].data, cold_out[0].data);  // the same machine code
    const RuntimeStats st = rt->stats();
    EXPECT_EQ(st.llvm_codegen_runs, 0);
    EXPECT_EQ(st.kernels_loaded, cold_kernels);
    EXPECT_EQ(st.cache.hits, cold_kernels);
    // Each kernel's tuning record is looked up before it is loaded: nothing was tuned.
    EXPECT_EQ(st.cache.misses, cold_kernels);
    const std::vector<KernelEvent> events = rt->kernel_events();
    ASSERT_EQ(static_cast<int64_t>(events.size()), cold_kernels);
    for (const KernelEvent& e : events) {
      EXPECT_TRUE(e.loaded_from_cache) << e.kernel;
      EXPECT_EQ(e.function, "mlp");
      EXPECT_GT(e.seconds, 0) << e.kernel;
      std::cerr << "[ warm     ] " << e.kernel << " loaded in " << e.seconds * 1000 << " ms\n";
    }
  }
  std::filesystem::remove_all(dir);
}

TEST(WarmStart, OtherIsaIsAMiss) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pto_warm_isa_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  TraceFn f = [](std::span<const Value> v) { return std::vector<Value>{pto::exp(v[0])}; };
  const std::vector<HostTensor> in = {HostTensor::Random({33}, 1)};
  for (TargetIsa isa : {TargetIsa::kHost, TargetIsa::kSse2}) {
    std::unique_ptr<Runtime> rt = testing::OpenRuntime({.cache_path = dir.string(), .isa = isa});
    auto fn = rt->JitTraced("exp", 1, f, {});
    ASSERT_TRUE(fn.ok());
    ASSERT_TRUE(testing::RunPto(**fn, in).ok());
    // The SSE2 target's codegen fingerprint differs: compiled, never loaded from the host's code.
    EXPECT_EQ((*fn)->stats().kernels_compiled, 1);
    EXPECT_EQ((*fn)->stats().kernels_loaded, 0);
  }
  std::filesystem::remove_all(dir);
}

// A cache shipped read-only (e.g. in an image) under an empty writable one: every kernel is
// loaded from the base, nothing compiled; new kernels go to the writable layer only.
TEST(WarmStart, ShippedBaseServesKernels) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pto_warm_base_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string base = (dir / "base").string(), top = (dir / "top").string();
  TraceFn f = [](std::span<const Value> v) { return std::vector<Value>{pto::tanh(v[0]) * v[1]}; };
  TraceFn g = [](std::span<const Value> v) { return std::vector<Value>{pto::exp(v[0])}; };
  const std::vector<HostTensor> in = {HostTensor::Random({40, 24}, 1),
                                      HostTensor::Random({40, 24}, 2)};
  {
    std::unique_ptr<Runtime> rt = testing::OpenRuntime({.cache_path = base});
    auto fn = rt->JitTraced("f", 2, f, {});
    ASSERT_TRUE(fn.ok());
    ASSERT_TRUE(testing::RunPto(**fn, in).ok());
    ASSERT_EQ(rt->stats().llvm_codegen_runs, 1);
    ASSERT_TRUE(rt->stats().cache.persistent) << rt->stats().cache.description;
  }
  {
    std::unique_ptr<Runtime> rt =
        testing::OpenRuntime({.cache_path = top, .cache_base_path = base});
    auto fn = rt->JitTraced("f", 2, f, {});
    ASSERT_TRUE(fn.ok());
    ASSERT_TRUE(testing::RunPto(**fn, in).ok());
    EXPECT_EQ(rt->stats().cache.role, "writer") << rt->stats().cache.description;
    EXPECT_EQ(rt->stats().llvm_codegen_runs, 0);
    EXPECT_EQ(rt->stats().kernels_loaded, 1);
    auto gn = rt->JitTraced("g", 1, g, {});
    ASSERT_TRUE(gn.ok());
    ASSERT_TRUE(testing::RunPto(**gn, {in[0]}).ok());
    EXPECT_EQ(rt->stats().llvm_codegen_runs, 1);  // g is new: compiled, stored on top
  }
  {
    // The base did not change: g is not in it.
    std::unique_ptr<Runtime> rt = testing::OpenRuntime({.cache_path = base});
    auto gn = rt->JitTraced("g", 1, g, {});
    ASSERT_TRUE(gn.ok());
    ASSERT_TRUE(testing::RunPto(**gn, {in[0]}).ok());
    EXPECT_EQ(rt->stats().llvm_codegen_runs, 1);
  }
  std::filesystem::remove_all(dir);
}

// A cache after tuning holds a tuning record per kernel; a warm start applies each one, checked
// against its kernel's rules, and builds no search space for it (building one enumerates the
// space: a cost that grew with every record).
TEST(WarmStart, TuningRecordsAreAppliedWithoutBuildingSearchSpaces) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("pto_warm_tuned_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  TraceFn mlp = [](std::span<const Value> v) {
    return std::vector<Value>{softmax(linear(gelu(linear(v[0], v[1], v[2])), v[3], v[4]))};
  };
  const std::vector<HostTensor> in = {HostTensor::Random({7, 32}, 1),
                                      HostTensor::Random({64, 32}, 2), HostTensor::Random({64}, 3),
                                      HostTensor::Random({32, 64}, 4), HostTensor::Random({32}, 5)};
  int64_t kernels = 0;
  {
    RuntimeOptions tune = {.cache_path = dir.string()};
    tune.tuning.mode = TuningMode::kBlocking;
    tune.tuning.trials_per_kernel = 2;
    std::unique_ptr<Runtime> rt = testing::OpenRuntime(tune);
    auto fn = rt->JitTraced("mlp", 5, mlp, {});
    ASSERT_TRUE(fn.ok());
    ASSERT_TRUE(testing::RunPto(**fn, in).ok());
    kernels = (*fn)->stats().kernels_compiled;
    ASSERT_EQ(static_cast<int64_t>(rt->tuning_results().size()), kernels);
    for (const KernelTuning& k : rt->tuning_results()) EXPECT_EQ(k.ended, "completed") << k.kernel;
  }
  ASSERT_GE(kernels, 3);
  {
    std::unique_ptr<Runtime> rt = testing::OpenRuntime({.cache_path = dir.string()});
    auto fn = rt->JitTraced("mlp", 5, mlp, {});
    ASSERT_TRUE(fn.ok());
    const int64_t spaces_before = tuner::SearchSpacesBuilt();
    auto out = testing::RunPto(**fn, in);
    const int64_t spaces_built = tuner::SearchSpacesBuilt() - spaces_before;
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*fn)->stats().tuning_records_applied, kernels);
    EXPECT_EQ((*fn)->stats().kernels_tuned_cached, kernels);
    EXPECT_EQ((*fn)->stats().kernels_loaded, kernels);
    EXPECT_EQ((*fn)->stats().kernels_compiled, 0);
    EXPECT_EQ(spaces_built, 0) << "for " << kernels << " tuning records";
    std::cerr << "[ warm     ] " << kernels << " tuning records applied, " << spaces_built
              << " search spaces built\n";
    auto want = testing::RunReference(mlp, in);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(testing::Compare(*out, *want, ops::Tolerance{1e-4, 1e-4}), "");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pto
