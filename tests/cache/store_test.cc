// The CacheStore contract, run against both implementations (MemoryStore and RocksDbStore
// on a real database in a temporary directory).
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_store.h"
#include "gtest/gtest.h"
#include "tests/cache/cache_test_util.h"

namespace pto::cache {
namespace {

using testing::KernelParts;
using testing::MakeKernel;
using testing::MakePlan;
using testing::MakeTuning;
using testing::PlanParts;
using testing::SameMessage;
using testing::TempDir;
using testing::TuningParts;
using testing::WithoutUsage;

class StoreTest : public ::testing::TestWithParam<bool> {
 protected:
  bool on_disk() const { return GetParam(); }

  std::unique_ptr<CacheStore> Open(int64_t capacity = int64_t{1} << 30,
                                   const std::string& name = "db") {
    CacheOptions options;
    if (on_disk()) options.path = dir_.Sub(name);
    options.capacity_bytes = capacity;
    options.log = log_.Sink();
    options.clock_ms = [this] { return now_ms_.load(); };
    absl::StatusOr<std::unique_ptr<CacheStore>> store = OpenCache(options);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return nullptr;
    EXPECT_EQ((*store)->persistent(), on_disk()) << log_.All();
    return std::move(*store);
  }

  TempDir dir_;
  testing::LogCapture log_;
  std::atomic<int64_t> now_ms_{1700000000000};
};

TEST_P(StoreTest, KernelRoundTrip) {
  std::unique_ptr<CacheStore> store = Open();
  ASSERT_NE(store, nullptr);
  const proto::KernelRecord record = MakeKernel("add", 4096);
  auto miss = store->GetKernel(KernelParts("add"));
  ASSERT_TRUE(miss.ok()) << miss.status();
  EXPECT_FALSE(miss->has_value());

  ASSERT_TRUE(store->PutKernel(record).ok());
  now_ms_ += 1000;
  auto hit = store->GetKernel(KernelParts("add"));
  ASSERT_TRUE(hit.ok()) << hit.status();
  ASSERT_TRUE(hit->has_value());
  EXPECT_TRUE(SameMessage(WithoutUsage(**hit), WithoutUsage(record)));
  EXPECT_EQ((*hit)->schema_version(), kSchemaVersion);
  EXPECT_EQ((*hit)->hits(), 1);
  EXPECT_EQ((*hit)->last_used_unix_ms(), now_ms_.load());
  EXPECT_EQ((*hit)->object(), record.object());

  auto again = store->GetKernel(KernelParts("add"));
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((*again)->hits(), 2);

  const CacheStats s = store->stats();
  EXPECT_EQ(s.hits, 2);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.corrupt, 0);
  EXPECT_EQ(s.puts, 1);
  EXPECT_EQ(s.entries, 1);
  EXPECT_GT(s.kernel_bytes, 4096);
  EXPECT_EQ(s.bytes, s.kernel_bytes);
}

TEST_P(StoreTest, CreatedTimeIsFilledInWhenMissing) {
  std::unique_ptr<CacheStore> store = Open();
  ASSERT_NE(store, nullptr);
  proto::KernelRecord record = MakeKernel("relu");
  record.clear_created_unix_ms();
  ASSERT_TRUE(store->PutKernel(record).ok());
  auto hit = store->GetKernel(KernelParts("relu"));
  ASSERT_TRUE(hit.ok() && hit->has_value());
  EXPECT_EQ((*hit)->created_unix_ms(), now_ms_.load());
}

TEST_P(StoreTest, TuningAndPlanRoundTrip) {
  std::unique_ptr<CacheStore> store = Open();
  ASSERT_NE(store, nullptr);
  const proto::TuningRecord tuning = MakeTuning("softmax");
  const proto::PlanRecord plan = MakePlan("mlp");
  ASSERT_TRUE(store->PutTuning(tuning).ok());
  ASSERT_TRUE(store->PutPlan(plan).ok());

  auto t = store->GetTuning(TuningParts("softmax"));
  ASSERT_TRUE(t.ok() && t->has_value()) << t.status();
  proto::TuningRecord expected_t = tuning;
  expected_t.set_schema_version(kSchemaVersion);
  EXPECT_TRUE(SameMessage(**t, expected_t));

  auto p = store->GetPlan(PlanParts("mlp"));
  ASSERT_TRUE(p.ok() && p->has_value()) << p.status();
  proto::PlanRecord expected_p = plan;
  expected_p.set_schema_version(kSchemaVersion);
  EXPECT_TRUE(SameMessage(**p, expected_p));
  EXPECT_EQ((*p)->kernel_keys_size(), 2);

  // Replacing a record keeps one entry.
  proto::TuningRecord better = tuning;
  better.set_best_seconds(1e-4);
  ASSERT_TRUE(store->PutTuning(better).ok());
  auto t2 = store->GetTuning(TuningParts("softmax"));
  ASSERT_TRUE(t2.ok() && t2->has_value());
  EXPECT_EQ((*t2)->best_seconds(), 1e-4);
  EXPECT_EQ(store->stats().entries, 2);
}

TEST_P(StoreTest, ChangingAnyKernelKeyComponentIsAMiss) {
  std::unique_ptr<CacheStore> store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutKernel(MakeKernel("mm")).ok());
  for (int i = 0; i < 3; ++i) {
    KernelKeyParts parts = KernelParts("mm");
    std::string* field[] = {&parts.kernel_description, &parts.codegen_fingerprint,
                            &parts.compiler_fingerprint};
    *field[i] += " ";
    auto r = store->GetKernel(parts);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->has_value()) << "component " << i;
  }
  // A pto or LLVM upgrade changes the compiler fingerprint only.
  KernelKeyParts upgraded = KernelParts("mm");
  upgraded.compiler_fingerprint = CompilerFingerprint(1, "20.1.0", "O2");
  EXPECT_FALSE(store->GetKernel(upgraded)->has_value());
  EXPECT_TRUE(store->GetKernel(KernelParts("mm"))->has_value());
  EXPECT_EQ(store->stats().misses, 4);
  EXPECT_EQ(store->stats().corrupt, 0);
}

TEST_P(StoreTest, ChangingAnyTuningOrPlanKeyComponentIsAMiss) {
  std::unique_ptr<CacheStore> store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutTuning(MakeTuning("ln")).ok());
  ASSERT_TRUE(store->PutPlan(MakePlan("g")).ok());
  for (int i = 0; i < 5; ++i) {
    TuningKeyParts parts = TuningParts("ln");
    switch (i) {
      case 0:
        parts.fusion_group_hash += "x";
        break;
      case 1:
        parts.bucket = "batch:[65,128]";
        break;
      case 2:
        parts.dtype = "bf16";
        break;
      case 3:
        parts.performance_fingerprint += "x";
        break;
      case 4:
        parts.search_space_version += 1;
        break;
    }
    auto r = store->GetTuning(parts);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->has_value()) << "component " << i;
  }
  PlanKeyParts other_graph = PlanParts("g"), other_class = PlanParts("g");
  other_graph.graph_hash += "x";
  other_class.shape_class = "b=[1,64]%4";
  EXPECT_FALSE(store->GetPlan(other_graph)->has_value());
  EXPECT_FALSE(store->GetPlan(other_class)->has_value());
  EXPECT_TRUE(store->GetTuning(TuningParts("ln"))->has_value());
  EXPECT_TRUE(store->GetPlan(PlanParts("g"))->has_value());
}

TEST_P(StoreTest, PutRejectsRecordsWithoutTheirKeyFields) {
  std::unique_ptr<CacheStore> store = Open();
  ASSERT_NE(store, nullptr);
  proto::KernelRecord no_symbol = MakeKernel("x");
  no_symbol.clear_symbol();
  absl::Status s = store->PutKernel(no_symbol);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("KernelRecord.symbol"), std::string::npos) << s;
  proto::KernelRecord no_description = MakeKernel("x");
  no_description.clear_kernel_description();
  s = store->PutKernel(no_description);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("kernel_description"), std::string::npos) << s;
  s = store->PutTuning(proto::TuningRecord());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("fusion_group_hash"), std::string::npos) << s;
  s = store->PutPlan(proto::PlanRecord());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("graph_hash"), std::string::npos) << s;
  EXPECT_EQ(store->stats().puts, 0);
}

// Kernels past the capacity are evicted least recently used first; tuning and plan records
// are never evicted and do not count against the capacity.
TEST_P(StoreTest, LruEvictionPastCapacityKeepsTuningRecords) {
  // The stored size of one kernel "k<digit>" (they all have the same size), in this store.
  int64_t one = 0;
  {
    std::unique_ptr<CacheStore> probe = Open(int64_t{1} << 30, "probe");
    ASSERT_NE(probe, nullptr);
    ASSERT_TRUE(probe->PutKernel(MakeKernel("k0", 2000)).ok());
    one = probe->stats().kernel_bytes;
    ASSERT_GT(one, 2000);
  }
  std::unique_ptr<CacheStore> store = Open(/*capacity=*/3 * one + one / 2);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(store->PutTuning(MakeTuning("t" + std::to_string(i), 4000)).ok());
  }
  ASSERT_TRUE(store->PutPlan(MakePlan("p")).ok());
  for (int i = 0; i < 3; ++i) {
    now_ms_ += 10;
    ASSERT_TRUE(store->PutKernel(MakeKernel("k" + std::to_string(i), 2000)).ok());
  }
  EXPECT_EQ(store->stats().evictions, 0);
  EXPECT_EQ(store->stats().kernel_bytes, 3 * one);
  now_ms_ += 10;
  ASSERT_TRUE(store->GetKernel(KernelParts("k0"))->has_value());  // k1 is now the oldest

  now_ms_ += 10;
  ASSERT_TRUE(store->PutKernel(MakeKernel("k3", 2000)).ok());
  EXPECT_EQ(store->stats().evictions, 1);
  EXPECT_FALSE(store->GetKernel(KernelParts("k1"))->has_value());
  EXPECT_TRUE(store->GetKernel(KernelParts("k0"))->has_value());
  EXPECT_TRUE(store->GetKernel(KernelParts("k2"))->has_value());
  EXPECT_TRUE(store->GetKernel(KernelParts("k3"))->has_value());

  // Same millisecond: the later use still wins (k0, k3, k2 were all used at this ms).
  ASSERT_TRUE(store->GetKernel(KernelParts("k2"))->has_value());
  ASSERT_TRUE(store->PutKernel(MakeKernel("k4", 2000)).ok());
  EXPECT_EQ(store->stats().evictions, 2);
  EXPECT_FALSE(store->GetKernel(KernelParts("k0"))->has_value());
  EXPECT_TRUE(store->GetKernel(KernelParts("k3"))->has_value());
  EXPECT_TRUE(store->GetKernel(KernelParts("k2"))->has_value());
  EXPECT_TRUE(store->GetKernel(KernelParts("k4"))->has_value());
  EXPECT_EQ(store->stats().kernel_bytes, 3 * one);

  // A kernel larger than the whole capacity is not kept, and does not flush the others.
  ASSERT_TRUE(store->PutKernel(MakeKernel("huge", 8 * 2000)).ok());
  EXPECT_FALSE(store->GetKernel(KernelParts("huge"))->has_value());
  EXPECT_EQ(store->stats().kernel_bytes, 3 * one);
  EXPECT_TRUE(store->GetKernel(KernelParts("k4"))->has_value());

  for (int i = 0; i < 20; ++i) {
    auto t = store->GetTuning(TuningParts("t" + std::to_string(i)));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE(t->has_value()) << "tuning record " << i << " was evicted";
  }
  EXPECT_TRUE(store->GetPlan(PlanParts("p"))->has_value());
  EXPECT_GT(store->stats().bytes, 20 * 4000);
}

TEST_P(StoreTest, ConcurrentPutsAndGets) {
  std::unique_ptr<CacheStore> store = Open(/*capacity=*/64 << 10);
  ASSERT_NE(store, nullptr);
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        const std::string name = "c" + std::to_string((t * 7 + i) % 40);
        if (i % 3 == 0) {
          if (!store->PutKernel(MakeKernel(name, 1024)).ok()) ++wrong;
        } else {
          auto r = store->GetKernel(KernelParts(name));
          if (!r.ok()) {
            ++wrong;
          } else if (r->has_value() && (*r)->object() != MakeKernel(name, 1024).object()) {
            ++wrong;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(store->stats().kernel_bytes, 64 << 10);
}

INSTANTIATE_TEST_SUITE_P(BothStores, StoreTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "RocksDb" : "Memory";
                         });

}  // namespace
}  // namespace pto::cache
