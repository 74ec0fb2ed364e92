// What the Runtime writes to its persistent kernel cache: a plan record per shape class with
// the kernel keys in plan order, kernel records with their graph name, shape class and dtype;
// and the cache's capacity applied through RuntimeOptions (kernels evicted, tuning kept).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cache/cache_key.h"
#include "cache/cache_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/graph/graph_hash.h"
#include "jit/trace.h"
#include "tests/cache/cache_test_util.h"
#include "tests/jit/e2e/runtime_cache_util.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using cache::RecordKind;
using cache::testing::TempDir;
using ::testing::UnorderedElementsAre;

// Kernel names of a Dump(kExec), in call order (the prefixes of their symbols).
std::vector<std::string> CallNames(const std::string& exec_dump) {
  std::vector<std::string> names;
  const std::string calls = exec_dump.substr(exec_dump.find("calls:\n") + 7);
  for (absl::string_view line : absl::StrSplit(calls, '\n', absl::SkipEmpty())) {
    names.emplace_back(absl::StripAsciiWhitespace(line.substr(0, line.find('('))));
  }
  return names;
}

// The canonical hash of the program as the Function traces it (batch symbolic in [1, 64]).
std::string ProgramHash() {
  std::vector<jit::TraceInput> in(5);
  in[0].shape = {ir::SymExpr::Symbol(0), ir::SymExpr(32)};
  in[1].shape = {ir::SymExpr(64), ir::SymExpr(32)};
  in[2].shape = {ir::SymExpr(64)};
  in[3].shape = {ir::SymExpr(32), ir::SymExpr(64)};
  in[4].shape = {ir::SymExpr(32)};
  absl::StatusOr<ir::Graph> g = jit::Trace(testing::CacheTestProgram(), in, {{"batch", 1, 64}});
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? graph::CanonicalGraphHash(*g).Hex() : "";
}

TEST(CacheRecords, OnePlanPerShapeClassWithItsKernelsAndKernelInfo) {
  TempDir dir;
  const std::string path = dir.Sub("cache");
  const testing::CacheRun run = testing::RunCacheTestProgram(path, {1, 7});
  ASSERT_EQ(run.exec_dumps.size(), 2u);
  EXPECT_TRUE(run.warnings.empty()) << run.warnings[0];

  std::map<std::string, proto::KernelRecord> kernels;
  for (const cache::ScannedRecord& r : testing::ScanRecords(path, RecordKind::kKernel)) {
    ASSERT_TRUE(kernels[r.key].ParseFromString(r.payload)) << r.key;
  }
  std::map<std::string, proto::PlanRecord> plans;  // by shape class
  for (const cache::ScannedRecord& r : testing::ScanRecords(path, RecordKind::kPlan)) {
    proto::PlanRecord plan;
    ASSERT_TRUE(plan.ParseFromString(r.payload)) << r.key;
    plans[plan.shape_class()] = plan;
  }
  // batch 1 is its own class (a constant); 7 falls in the bucket [4, 7].
  ASSERT_EQ(plans.size(), 2u);
  ASSERT_EQ(plans.count("in0.0=1"), 1u);
  ASSERT_EQ(plans.count("in0.0=[4..7]"), 1u);
  const std::string hash = ProgramHash();
  ASSERT_EQ(hash.size(), 32u);
  const std::pair<std::string, int> classes[] = {{"in0.0=1", 0}, {"in0.0=[4..7]", 1}};
  std::set<std::string> planned;
  for (const auto& [cls, run_index] : classes) {
    SCOPED_TRACE(cls);
    const proto::PlanRecord& plan = plans[cls];
    EXPECT_EQ(plan.graph_hash(), hash);
    EXPECT_EQ(plan.graph_name(), "cache_mlp");
    const std::vector<std::string> names = CallNames(run.exec_dumps[run_index]);
    ASSERT_EQ(plan.kernel_keys_size(), static_cast<int>(names.size()));
    ASSERT_FALSE(names.empty());
    for (int k = 0; k < plan.kernel_keys_size(); ++k) {
      const std::string& key = plan.kernel_keys(k);
      planned.insert(key);
      ASSERT_EQ(kernels.count(key), 1u) << key << " is in the plan but not in the cache";
      const proto::KernelRecord& kernel = kernels[key];
      // In plan order: the k-th call's kernel, under the key of its own key parts.
      EXPECT_TRUE(absl::StartsWith(kernel.symbol(), names[k] + "_")) << kernel.symbol();
      EXPECT_EQ(cache::KernelKey(cache::KeyPartsOf(kernel)), key);
    }
    // The plan is found under its key parts.
    cache::CacheOptions options;
    options.path = path;
    auto store = cache::OpenCache(options);
    ASSERT_TRUE(store.ok());
    auto found = (*store)->GetPlan(cache::PlanKeyParts{hash, cls});
    ASSERT_TRUE(found.ok() && found->has_value()) << found.status();
    EXPECT_EQ((*found)->kernel_keys_size(), plan.kernel_keys_size());
  }
  // Every kernel stored belongs to a plan and says where it came from.
  ASSERT_EQ(planned.size(), kernels.size());
  for (const auto& [key, kernel] : kernels) {
    SCOPED_TRACE(kernel.symbol());
    EXPECT_EQ(planned.count(key), 1u);
    EXPECT_EQ(kernel.graph_name(), "cache_mlp");
    EXPECT_EQ(kernel.dtype(), "f32");
    // Where it came from, with the declared dim name (the plan's key above is canonical).
    EXPECT_TRUE(kernel.shape_class() == "batch=1" || kernel.shape_class() == "batch=[4..7]")
        << kernel.shape_class();
  }
  // The timing events name the same kernels, each compiled once.
  ASSERT_EQ(run.events.size(), kernels.size());
  for (const KernelEvent& e : run.events) {
    EXPECT_FALSE(e.loaded_from_cache);
    EXPECT_GT(e.seconds, 0);
    EXPECT_EQ(e.function, "cache_mlp");
  }
  EXPECT_EQ(run.stats.llvm_codegen_runs, static_cast<int64_t>(kernels.size()));
}

TEST(CacheRecords, ShapeClassTextIsCanonicalNotNamed) {
  // The same program with the batch dim named otherwise: same graph hash, same shape class
  // text, so the same plan key.
  TempDir dir;
  const std::string path = dir.Sub("cache");
  {
    std::unique_ptr<Runtime> rt = testing::OpenRuntime({.cache_path = path});
    ASSERT_NE(rt, nullptr);
    FunctionOptions options;
    options.dynamic = {{0, 0, Dim("rows", 1, 64)}};
    auto fn = rt->JitTraced("renamed", 5, testing::CacheTestProgram(), options);
    ASSERT_TRUE(fn.ok());
    ASSERT_TRUE(testing::RunPto(**fn, testing::CacheTestInputs(7)).ok());
  }
  std::vector<cache::ScannedRecord> plans = testing::ScanRecords(path, RecordKind::kPlan);
  ASSERT_EQ(plans.size(), 1u);
  proto::PlanRecord plan;
  ASSERT_TRUE(plan.ParseFromString(plans[0].payload));
  EXPECT_EQ(plan.graph_hash(), ProgramHash());
  EXPECT_EQ(plan.shape_class(), "in0.0=[4..7]");
  EXPECT_EQ(plan.graph_name(), "renamed");
}

TEST(CacheRecords, CapacityEvictsKernelsAndKeepsTuning) {
  TempDir dir;
  const std::vector<int64_t> batches = {1, 7, 16};
  // This program's kernel record sizes, from a run with the default capacity.
  testing::RunCacheTestProgram(dir.Sub("sizes"), batches);
  int64_t largest = 0, total = 0;
  std::vector<cache::ScannedRecord> sized =
      testing::ScanRecords(dir.Sub("sizes"), RecordKind::kKernel);
  for (const cache::ScannedRecord& r : sized) {
    largest = std::max(largest, r.stored_bytes);
    total += r.stored_bytes;
  }
  ASSERT_GE(sized.size(), 3u);
  // Room for the largest kernel (with slack for the varying compile times) but not for all.
  const int64_t capacity = std::max(largest + 256, total / 2);
  ASSERT_LT(capacity, total - 256);

  const std::string path = dir.Sub("cache");
  const proto::TuningRecord tuning = cache::testing::MakeTuning("kept");
  {
    cache::CacheOptions options;
    options.path = path;
    auto store = cache::OpenCache(options);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->persistent());
    ASSERT_TRUE((*store)->PutTuning(tuning).ok());
  }
  const testing::CacheRun run =
      testing::RunCacheTestProgram(path, batches, {.cache_capacity_bytes = capacity});
  EXPECT_TRUE(run.stats.cache.persistent);
  EXPECT_GT(run.stats.cache.evictions, 0);
  EXPECT_LE(run.stats.cache.kernel_bytes, capacity);
  EXPECT_GT(run.stats.cache.kernel_bytes, 0);
  EXPECT_EQ(run.stats.llvm_codegen_runs, static_cast<int64_t>(sized.size()));
  for (size_t b = 0; b < batches.size(); ++b) {
    EXPECT_EQ(testing::CompareWithReference(run.outputs[b], batches[b]), "");
  }
  // On disk after the Runtime is gone: within the capacity, fewer kernels, tuning still there.
  int64_t stored = 0;
  std::vector<cache::ScannedRecord> left = testing::ScanRecords(path, RecordKind::kKernel);
  for (const cache::ScannedRecord& r : left) stored += r.stored_bytes;
  EXPECT_LE(stored, capacity);
  EXPECT_LT(left.size(), sized.size());
  cache::CacheOptions options;
  options.path = path;
  auto store = cache::OpenCache(options);
  ASSERT_TRUE(store.ok());
  auto kept = (*store)->GetTuning(cache::testing::TuningParts("kept"));
  ASSERT_TRUE(kept.ok() && kept->has_value()) << kept.status();
  EXPECT_EQ((*kept)->config(), tuning.config());
}

}  // namespace
}  // namespace pto
