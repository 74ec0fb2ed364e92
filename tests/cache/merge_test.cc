// Merging caches (cache/merge.h): absent kernels and plans copied, tuning by speed-up.
#include "cache/merge.h"

#include <memory>
#include <optional>
#include <string>

#include "cache/cache_store.h"
#include "gtest/gtest.h"
#include "tests/cache/cache_test_util.h"

namespace pto::cache {
namespace {

using ::pto::cache::testing::KernelParts;
using ::pto::cache::testing::MakeKernel;
using ::pto::cache::testing::MakePlan;
using ::pto::cache::testing::MakeTuning;
using ::pto::cache::testing::PlanParts;
using ::pto::cache::testing::TempDir;
using ::pto::cache::testing::TuningParts;

std::unique_ptr<CacheStore> Open(const std::string& path) {
  CacheOptions options;
  options.path = path;
  absl::StatusOr<std::unique_ptr<CacheStore>> store = OpenCache(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return *std::move(store);
}

proto::TuningRecord Tuning(const std::string& name, double default_seconds, double best_seconds,
                           const std::string& config) {
  proto::TuningRecord r = MakeTuning(name);
  r.set_default_seconds(default_seconds);
  r.set_best_seconds(best_seconds);
  r.set_config(config);
  return r;
}

std::string ConfigOf(CacheStore& store, const std::string& name) {
  absl::StatusOr<std::optional<proto::TuningRecord>> r = store.GetTuning(TuningParts(name));
  if (!r.ok() || !r->has_value()) return "<missing>";
  return (*r)->config();
}

TEST(Merge, TuningKeepsTheLargerSpeedUpOverItsDefault) {
  TempDir dir;
  std::unique_ptr<CacheStore> dst = Open(dir.Sub("dst"));
  std::unique_ptr<CacheStore> src = Open(dir.Sub("src"));
  // "a": src's best is slower in absolute terms (a slower machine run) but 4x over its default
  // against dst's 2x, so src's config wins.
  ASSERT_TRUE(dst->PutTuning(Tuning("a", 4e-4, 2e-4, "dst-a")).ok());
  ASSERT_TRUE(src->PutTuning(Tuning("a", 1e-3, 2.5e-4, "src-a")).ok());
  // "b": src's best is faster in absolute terms but only 2x against dst's 3x: dst's stays.
  ASSERT_TRUE(dst->PutTuning(Tuning("b", 6e-4, 2e-4, "dst-b")).ok());
  ASSERT_TRUE(src->PutTuning(Tuning("b", 2e-4, 1e-4, "src-b")).ok());
  // "c": only in src. "d": src's record has no usable measurement.
  ASSERT_TRUE(src->PutTuning(Tuning("c", 2e-4, 1e-4, "src-c")).ok());
  ASSERT_TRUE(dst->PutTuning(Tuning("d", 2e-4, 1.9e-4, "dst-d")).ok());
  ASSERT_TRUE(src->PutTuning(Tuning("d", 2e-4, 0, "src-d")).ok());

  absl::StatusOr<MergeReport> report = MergeInto(*dst, *src);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->tuning_replaced, 1);
  EXPECT_EQ(report->tuning_kept, 2);
  EXPECT_EQ(report->tuning_copied, 1);
  EXPECT_EQ(ConfigOf(*dst, "a"), "src-a");
  EXPECT_EQ(ConfigOf(*dst, "b"), "dst-b");
  EXPECT_EQ(ConfigOf(*dst, "c"), "src-c");
  EXPECT_EQ(ConfigOf(*dst, "d"), "dst-d");
  // src is unchanged.
  EXPECT_EQ(ConfigOf(*src, "b"), "src-b");

  // Merging again changes nothing.
  report = MergeInto(*dst, *src);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->tuning_replaced + report->tuning_copied, 0);
  EXPECT_EQ(report->tuning_kept, 4);
}

TEST(Merge, SpeedUpIsDefaultOverBest) {
  EXPECT_DOUBLE_EQ(SpeedUp(Tuning("x", 6e-4, 2e-4, "")), 3.0);
  EXPECT_EQ(SpeedUp(Tuning("x", 6e-4, 0, "")), 0);
  EXPECT_EQ(SpeedUp(Tuning("x", 0, 2e-4, "")), 0);
}

TEST(Merge, KernelsAndPlansAreCopiedWhenAbsent) {
  TempDir dir;
  std::unique_ptr<CacheStore> dst = Open(dir.Sub("dst"));
  std::unique_ptr<CacheStore> src = Open(dir.Sub("src"));
  proto::KernelRecord mine = MakeKernel("gelu");
  mine.set_compile_seconds(1.25);  // same key, distinguishable record
  ASSERT_TRUE(dst->PutKernel(mine).ok());
  ASSERT_TRUE(src->PutKernel(MakeKernel("gelu")).ok());
  ASSERT_TRUE(src->PutKernel(MakeKernel("matmul")).ok());
  ASSERT_TRUE(dst->PutPlan(MakePlan("mlp")).ok());
  ASSERT_TRUE(src->PutPlan(MakePlan("mlp")).ok());
  ASSERT_TRUE(src->PutPlan(MakePlan("block")).ok());

  absl::StatusOr<MergeReport> report = MergeInto(*dst, *src);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->kernels_copied, 1);
  EXPECT_EQ(report->kernels_present, 1);
  EXPECT_EQ(report->plans_copied, 1);
  EXPECT_EQ(report->plans_present, 1);
  EXPECT_EQ(report->skipped_unsound, 0);
  absl::StatusOr<std::optional<proto::KernelRecord>> gelu = dst->GetKernel(KernelParts("gelu"));
  ASSERT_TRUE(gelu.ok() && gelu->has_value());
  EXPECT_EQ((*gelu)->compile_seconds(), 1.25) << "an existing kernel is not overwritten";
  absl::StatusOr<std::optional<proto::KernelRecord>> matmul = dst->GetKernel(KernelParts("matmul"));
  ASSERT_TRUE(matmul.ok() && matmul->has_value());
  EXPECT_EQ((*matmul)->object(), MakeKernel("matmul").object());
  EXPECT_EQ((*matmul)->created_unix_ms(), MakeKernel("matmul").created_unix_ms());
  absl::StatusOr<std::optional<proto::PlanRecord>> block = dst->GetPlan(PlanParts("block"));
  ASSERT_TRUE(block.ok() && block->has_value());
  EXPECT_EQ(dst->stats().entries, 4);
  // Merging reads src with Scan: no hits or misses counted there.
  EXPECT_EQ(src->stats().hits, 0);
  EXPECT_EQ(src->stats().misses, 0);
}

}  // namespace
}  // namespace pto::cache
