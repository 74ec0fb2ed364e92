// A compiler upgrade (another compiler fingerprint) on one cache: the kernel is a miss and is
// compiled again, the tuning record (keyed without the compiler version) is still found.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cache/cache_store.h"
#include "device/device_info.h"
#include "gtest/gtest.h"
#include "jit/codegen/codegen_target.h"
#include "jit/kernel_compiler.h"
#include "jit/pipeline.h"
#include "jit/trace.h"
#include "tests/cache/cache_test_util.h"

namespace pto {
namespace {

// The first kernel of exp(x) * 2 + x on x [33].
ir::Kernel TestKernel(const device::DeviceInfo& device) {
  TraceFn f = [](std::span<const Value> v) {
    return std::vector<Value>{pto::exp(v[0]) * 2.0f + v[0]};
  };
  std::vector<jit::TraceInput> in(1);
  in[0].shape = {ir::SymExpr(33)};
  absl::StatusOr<ir::Graph> graph = jit::Trace(f, in, {});
  EXPECT_TRUE(graph.ok()) << graph.status();
  jit::PipelineOptions options;
  options.device = &device;
  absl::StatusOr<jit::LoweredProgram> lowered = jit::Lower(*graph, jit::ShapeClass{}, options);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_FALSE(lowered->tiles.calls.empty());
  return lowered->tiles.calls.at(0).kernel;
}

struct CompileResult {
  int64_t codegen_runs = 0;
  int64_t loads = 0;
  std::string cache_key;
  std::string object;
};

CompileResult CompileWith(cache::CacheStore& store, const device::DeviceInfo& device,
                          const ir::Kernel& kernel, const std::string& fingerprint) {
  jit::KernelCompilerOptions options;
  options.store = &store;
  options.compiler_fingerprint = fingerprint;
  auto compiler = jit::KernelCompiler::Create(device, options);
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  if (!compiler.ok()) return {};
  EXPECT_EQ((*compiler)->compiler_fingerprint(), fingerprint);
  auto compiled = (*compiler)->Compile(kernel, {.graph_name = "upgrade", .shape_class = "static"});
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return {};
  EXPECT_NE((*compiled)->fn, nullptr);
  for (const KernelEvent& e : (*compiler)->events()) {
    std::cerr << "[ timing   ] " << fingerprint << ": " << e.kernel
              << (e.loaded_from_cache ? " loaded in " : " compiled in ") << e.seconds * 1000
              << " ms\n";
  }
  return {(*compiler)->codegen_runs(), (*compiler)->cache_loads(), (*compiled)->cache_key,
          (*compiled)->object};
}

TEST(CompilerUpgrade, RecompilesCodeAndKeepsTuning) {
  cache::testing::TempDir dir;
  cache::CacheOptions options;
  options.path = dir.Sub("cache");
  auto store = cache::OpenCache(options);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->persistent());
  const device::DeviceInfo device = device::DetectHost();
  const ir::Kernel kernel = TestKernel(device);
  const std::string a = "pto=0.1.0;abi=1;llvm=19.1.0;opts=O2";
  const std::string b = "pto=0.2.0;abi=1;llvm=20.1.0;opts=O2";

  const CompileResult first = CompileWith(**store, device, kernel, a);
  EXPECT_EQ(first.codegen_runs, 1);
  EXPECT_EQ(first.loads, 0);
  const proto::TuningRecord tuning = cache::testing::MakeTuning("upgrade");
  ASSERT_TRUE((*store)->PutTuning(tuning).ok());

  // Control: the same fingerprint in a new compiler loads the code.
  const CompileResult same = CompileWith(**store, device, kernel, a);
  EXPECT_EQ(same.codegen_runs, 0);
  EXPECT_EQ(same.loads, 1);
  EXPECT_EQ(same.cache_key, first.cache_key);

  // The upgrade: a miss, compiled again, under another key.
  const int64_t misses = (*store)->stats().misses;
  const CompileResult upgraded = CompileWith(**store, device, kernel, b);
  EXPECT_EQ(upgraded.codegen_runs, 1);
  EXPECT_EQ(upgraded.loads, 0);
  EXPECT_EQ((*store)->stats().misses, misses + 1);
  EXPECT_NE(upgraded.cache_key, first.cache_key);

  // The tuning survives, and both compilers' code is stored, each under its fingerprint.
  auto kept = (*store)->GetTuning(cache::testing::TuningParts("upgrade"));
  ASSERT_TRUE(kept.ok() && kept->has_value()) << kept.status();
  EXPECT_EQ((*kept)->config(), tuning.config());
  std::vector<std::string> fingerprints;
  ASSERT_TRUE((*store)
                  ->Scan(cache::RecordKind::kKernel,
                         [&](const cache::ScannedRecord& r) {
                           proto::KernelRecord record;
                           ASSERT_TRUE(record.ParseFromString(r.payload));
                           fingerprints.push_back(record.compiler_fingerprint());
                           EXPECT_EQ(record.graph_name(), "upgrade");
                         })
                  .ok());
  std::sort(fingerprints.begin(), fingerprints.end());
  EXPECT_EQ(fingerprints, (std::vector<std::string>{a, b}));
}

TEST(CompilerUpgrade, DefaultFingerprintIsThisBuilds) {
  auto compiler = jit::KernelCompiler::Create(device::DetectHost());
  ASSERT_TRUE(compiler.ok());
  EXPECT_EQ((*compiler)->compiler_fingerprint().rfind("pto=", 0), 0u);
  EXPECT_NE((*compiler)->compiler_fingerprint().find(";llvm="), std::string::npos);
  EXPECT_NE(
      (*compiler)->compiler_fingerprint().find(absl::StrCat("codegen=", jit::kCodegenRevision)),
      std::string::npos);
}

}  // namespace
}  // namespace pto
