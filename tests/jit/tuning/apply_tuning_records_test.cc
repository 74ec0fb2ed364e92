// Pipeline step apply_tuning_records (jit/tuning/apply_tuning_records.h) alone: a kernel with
// a record in the cache takes the record's config, one without keeps its default, a record
// whose config no longer fits the kernel's space is ignored with a warning naming the kernel,
// a record of another search-space version is not found (the version is part of the key), and
// no store applies nothing.
#include "jit/tuning/apply_tuning_records.h"

#include <string>
#include <vector>

#include "cache/memory_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/tuning/kernel_space.h"
#include "jit/tuning/tuning_record.h"
#include "tests/jit/e2e/test_util.h"

namespace pto::jit {
namespace {

using ::testing::HasSubstr;

constexpr char kFingerprint[] = "test-machine";
constexpr char kClass[] = "static";

// Two kernels: gelu(x @ w) and its sum over rows.
absl::StatusOr<LoweredProgram> TwoKernels() {
  return testing::LowerStatic(
      [](std::span<const Value> v) {
        Value h = gelu(matmul(v[0], v[1]));
        return std::vector<Value>{h, reduce_sum(h, 1)};
      },
      {{64, 128}, {128, 96}});
}

// Another valid config of `kernel`'s space than its default.
ir::TileConfig AnotherConfig(const ir::Kernel& kernel, const device::DeviceInfo& device) {
  absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(kernel, device);
  EXPECT_TRUE(space.ok()) << space.status();
  const tuner::Config here = ToSpaceConfig(*space, kernel.config);
  for (const tuner::Config& c : space->Neighbors(here)) {
    absl::StatusOr<ir::TileConfig> config = ApplySpaceConfig(*space, c, kernel.config);
    if (config.ok()) return *config;
  }
  ADD_FAILURE() << "no other config for " << kernel.name;
  return kernel.config;
}

proto::TuningRecord RecordOf(const ir::Kernel& kernel, const device::DeviceInfo& device,
                             const ir::TileConfig& best, bool complete) {
  KernelTuning result;
  result.trials = 12;
  result.default_seconds = 2e-6;
  result.best_seconds = 1e-6;
  absl::StatusOr<proto::TuningRecord> record =
      MakeTuningRecord(kernel, kClass, kFingerprint, device, best, result, "test", complete);
  EXPECT_TRUE(record.ok()) << record.status();
  return *record;
}

struct Warnings {
  std::vector<std::string> messages;
  Logger logger{[this](LogLevel, std::string_view m) { messages.emplace_back(m); },
                LogLevel::kWarning};
};

TuningRecordSource SourceOf(cache::CacheStore* store, const device::DeviceInfo& device,
                            const Logger& logger) {
  TuningRecordSource source;
  source.store = store;
  source.shape_class = kClass;
  source.performance_fingerprint = kFingerprint;
  source.device = &device;
  source.logger = &logger;
  source.function_name = "two";
  return source;
}

TEST(ApplyTuningRecords, AKernelWithARecordTakesItsConfig) {
  absl::StatusOr<LoweredProgram> p = TwoKernels();
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->tiles.calls.size(), 2u);
  const device::DeviceInfo device = device::DetectHost();
  const ir::Kernel& first = p->tiles.calls[0].kernel;
  const ir::TileConfig tuned = AnotherConfig(first, device);
  cache::MemoryStore store(cache::CacheOptions{});
  ASSERT_TRUE(store.PutTuning(RecordOf(first, device, tuned, /*complete=*/true)).ok());
  const ir::TileConfig second_default = p->tiles.calls[1].kernel.config;
  Warnings w;
  const AppliedTuning applied = ApplyTuningRecords(p->tiles, SourceOf(&store, device, w.logger));
  ASSERT_EQ(applied.records.size(), 2u);
  EXPECT_TRUE(applied.records[0].has_value());
  EXPECT_FALSE(applied.records[1].has_value());
  EXPECT_EQ(applied.applied, 1);
  EXPECT_EQ(applied.complete, 1);
  EXPECT_TRUE(p->tiles.calls[0].kernel.config == tuned);
  EXPECT_TRUE(p->tiles.calls[1].kernel.config == second_default);
  EXPECT_TRUE(w.messages.empty());
}

TEST(ApplyTuningRecords, ARecordThatNoLongerFitsIsIgnoredWithAWarning) {
  absl::StatusOr<LoweredProgram> p = TwoKernels();
  ASSERT_TRUE(p.ok()) << p.status();
  const device::DeviceInfo device = device::DetectHost();
  const ir::Kernel& first = p->tiles.calls[0].kernel;
  const ir::TileConfig before = first.config;
  proto::TuningRecord record = RecordOf(first, device, AnotherConfig(first, device), true);
  record.set_config("no_such_parameter=1");
  cache::MemoryStore store(cache::CacheOptions{});
  ASSERT_TRUE(store.PutTuning(record).ok());
  Warnings w;
  const AppliedTuning applied = ApplyTuningRecords(p->tiles, SourceOf(&store, device, w.logger));
  EXPECT_FALSE(applied.records[0].has_value());
  EXPECT_EQ(applied.applied, 0);
  EXPECT_EQ(applied.complete, 0);
  EXPECT_TRUE(p->tiles.calls[0].kernel.config == before);
  ASSERT_EQ(w.messages.size(), 1u);
  EXPECT_THAT(w.messages[0], HasSubstr("ignoring the tuning record of kernel " + first.name));
  EXPECT_THAT(w.messages[0], HasSubstr("no_such_parameter"));
}

TEST(ApplyTuningRecords, ARecordOfAnotherSpaceVersionIsNotFound) {
  absl::StatusOr<LoweredProgram> p = TwoKernels();
  ASSERT_TRUE(p.ok()) << p.status();
  const device::DeviceInfo device = device::DetectHost();
  const ir::Kernel& first = p->tiles.calls[0].kernel;
  const ir::TileConfig before = first.config;
  proto::TuningRecord record = RecordOf(first, device, AnotherConfig(first, device), true);
  record.set_search_space_version(kKernelSpaceVersion + 1);
  cache::MemoryStore store(cache::CacheOptions{});
  ASSERT_TRUE(store.PutTuning(record).ok());
  Warnings w;
  const AppliedTuning applied = ApplyTuningRecords(p->tiles, SourceOf(&store, device, w.logger));
  EXPECT_FALSE(applied.records[0].has_value());
  EXPECT_TRUE(p->tiles.calls[0].kernel.config == before);
  EXPECT_TRUE(w.messages.empty());
}

TEST(ApplyTuningRecords, NoStoreAppliesNothing) {
  absl::StatusOr<LoweredProgram> p = TwoKernels();
  ASSERT_TRUE(p.ok()) << p.status();
  const device::DeviceInfo device = device::DetectHost();
  Warnings w;
  const AppliedTuning applied = ApplyTuningRecords(p->tiles, SourceOf(nullptr, device, w.logger));
  ASSERT_EQ(applied.records.size(), 2u);
  EXPECT_FALSE(applied.records[0].has_value() || applied.records[1].has_value());
}

}  // namespace
}  // namespace pto::jit
