// Rebuilding column families with a damaged data block, on real RocksDB files: records are
// stored, flushed and compacted into SST files, a byte inside one record is flipped (so its
// block fails its checksum), and the family is rebuilt from what can still be read.
#include "cache/rebuild_families.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cache/cache_key.h"
#include "cache/envelope.h"
#include "cache/rocksdb_options.h"
#include "cache/rocksdb_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "rocksdb/sst_file_writer.h"
#include "tests/cache/cache_test_util.h"

namespace pto::cache {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

constexpr int kRecords = 160;

std::string KeyOf(RecordKind kind, int i) {
  const std::string name = testing::RecordName(kind, i);
  switch (kind) {
    case RecordKind::kKernel:
      return KernelKey(testing::KernelParts(name));
    case RecordKind::kPlan:
      return PlanKey(testing::PlanParts(name));
    case RecordKind::kTuning:
      break;
  }
  return TuningKey(testing::TuningParts(name));
}

// The record whose key is the median: records before and after it lie in other blocks.
int MedianRecord(RecordKind kind) {
  std::vector<std::pair<std::string, int>> keys;
  for (int i = 0; i < kRecords; ++i) keys.emplace_back(KeyOf(kind, i), i);
  std::sort(keys.begin(), keys.end());
  return keys[kRecords / 2].second;
}

int LastRecord(RecordKind kind) {
  int last = 0;
  for (int i = 1; i < kRecords; ++i) {
    if (KeyOf(kind, i) > KeyOf(kind, last)) last = i;
  }
  return last;
}

// Rebuilds the database at `path`, expecting exactly one family to have been damaged.
FamilyRebuild RebuildTheOneDamagedFamily(const std::string& path) {
  absl::StatusOr<std::vector<FamilyRebuild>> rebuilt = RebuildDamagedFamilies(path);
  EXPECT_TRUE(rebuilt.ok()) << rebuilt.status();
  if (!rebuilt.ok() || rebuilt->size() != 1) {
    ADD_FAILURE() << "expected one rebuilt family";
    return {};
  }
  const FamilyRebuild& r = (*rebuilt)[0];
  std::cerr << "[ rebuilt  ] " << r.family << ": " << r.kept << " kept, " << r.lost
            << " lost; damage: " << r.damage << "\n";
  return r;
}

std::unique_ptr<RocksDbStore> OpenStore(const std::string& path,
                                        testing::LogCapture* log = nullptr) {
  CacheOptions options;
  options.path = path;
  if (log != nullptr) options.log = log->Sink();
  absl::StatusOr<std::unique_ptr<RocksDbStore>> store = RocksDbStore::Open(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

class RebuildFamiliesTest : public ::testing::TestWithParam<RecordKind> {
 protected:
  TempDir dir_;
  std::string db_path_ = dir_.Sub("cache");
};

TEST_P(RebuildFamiliesTest, DamagedBlockIsRebuiltFromTheRecordsStillReadable) {
  const RecordKind kind = GetParam();
  const std::string family = kind == RecordKind::kKernel ? kKernelsFamily
                             : kind == RecordKind::kPlan ? kPlansFamily
                                                         : kTuningFamily;
  testing::FillFamilyAndCompact(db_path_, kind, kRecords);
  {
    std::unique_ptr<RocksDbStore> store = OpenStore(db_path_);
    ASSERT_NE(store, nullptr);
    // A record of another family, which the rebuild leaves alone.
    ASSERT_TRUE(kind == RecordKind::kTuning
                    ? store->PutPlan(testing::MakePlan("bystander")).ok()
                    : store->PutTuning(testing::MakeTuning("bystander")).ok());
  }
  const int victim = MedianRecord(kind);
  const fs::path sst = testing::DamageSstAt(db_path_, testing::RecordNeedle(kind, victim));
  ASSERT_FALSE(sst.empty());

  // Before: a scan stops at the damaged block, for good (what made `pto cache verify` fail on
  // every run).
  {
    testing::LogCapture log;
    std::unique_ptr<RocksDbStore> store = OpenStore(db_path_, &log);
    ASSERT_NE(store, nullptr);
    if (kind == RecordKind::kKernel) {
      EXPECT_TRUE(log.AtLeast(kLogWarning).empty()) << log.All();  // kernels are read on demand
    } else {
      // The index of plans and tuning records reads them all at open: one warning.
      const std::vector<std::string> warnings = log.AtLeast(kLogWarning);
      ASSERT_EQ(warnings.size(), 1u) << log.All();
      EXPECT_THAT(warnings[0], HasSubstr("pto cache: the " + family + " records of '" + db_path_ +
                                         "' cannot be read past a damaged block (Corruption: "
                                         "block checksum mismatch: "));
      EXPECT_THAT(warnings[0], HasSubstr("); `pto cache verify --repair` rebuilds them from the "
                                         "records still readable"));
    }
    int64_t scanned = 0;
    absl::Status scan = store->Scan(kind, [&](const ScannedRecord&) { ++scanned; });
    EXPECT_EQ(scan.code(), absl::StatusCode::kDataLoss) << scan;
    EXPECT_THAT(scan.message(), HasSubstr("Corruption: block checksum mismatch"));
    EXPECT_LT(scanned, kRecords / 2 + 1);
  }

  const FamilyRebuild r = RebuildTheOneDamagedFamily(db_path_);
  EXPECT_EQ(r.family, family);
  EXPECT_THAT(r.damage, HasSubstr("Corruption: block checksum mismatch"));
  EXPECT_THAT(r.damage, HasSubstr(sst.filename().string()));
  EXPECT_GE(r.lost, 1);
  EXPECT_LE(r.lost, kRecords / 8);  // one data block's records
  EXPECT_EQ(r.kept + r.lost, kRecords);
  EXPECT_FALSE(fs::exists(fs::path(db_path_) / "rebuild"));

  // After: every record read is the one stored, the damaged one and its block are misses,
  // records past the damaged block are kept, and scans read everything.
  std::unique_ptr<RocksDbStore> store = OpenStore(db_path_);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(testing::CountIntactRecords(*store, kind, kRecords), r.kept);
  EXPECT_EQ(testing::ReadRecord(*store, kind, victim), "");
  EXPECT_EQ(testing::ReadRecord(*store, kind, LastRecord(kind)),
            testing::RecordPayload(kind, LastRecord(kind)));
  EXPECT_EQ(store->stats().corrupt, 0);
  for (RecordKind k : {RecordKind::kKernel, RecordKind::kPlan, RecordKind::kTuning}) {
    int64_t n = 0;
    absl::Status scan = store->Scan(k, [&](const ScannedRecord& s) {
      ++n;
      EXPECT_EQ(s.problem, "") << s.key;
    });
    EXPECT_TRUE(scan.ok()) << scan;
    if (k == kind) {
      EXPECT_EQ(n, r.kept);
    }
  }
  if (kind == RecordKind::kTuning) {
    EXPECT_TRUE(store->GetPlan(testing::PlanParts("bystander"))->has_value());
  } else {
    EXPECT_TRUE(store->GetTuning(testing::TuningParts("bystander"))->has_value());
  }
  if (kind == RecordKind::kKernel) {
    // The usage entries of lost kernels went with them.
    EXPECT_EQ(store->stats().entries, r.kept + 1);
  }

  // It takes writes, compacts and keeps them across a reopen.
  ASSERT_TRUE(store->PutKernel(testing::MakeKernel("after")).ok());
  ASSERT_TRUE(store->Flush().ok());
  absl::Status compacted = store->CompactAll();
  EXPECT_TRUE(compacted.ok()) << compacted;
  store.reset();
  store = OpenStore(db_path_);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->GetKernel(testing::KernelParts("after"))->has_value());
  EXPECT_EQ(testing::ReadRecord(*store, kind, LastRecord(kind)),
            testing::RecordPayload(kind, LastRecord(kind)));
  absl::StatusOr<std::vector<FamilyRebuild>> again = RebuildDamagedFamilies(db_path_);
  ASSERT_TRUE(again.status().code() == absl::StatusCode::kFailedPrecondition) << again.status();
  EXPECT_THAT(again.status().message(),
              HasSubstr("cannot rebuild the cache database at '" + db_path_ +
                        "' while another process (or another store in this one) has it open as "
                        "its writer"));
  store.reset();
  again = RebuildDamagedFamilies(db_path_);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->empty());  // nothing damaged any more
}

INSTANTIATE_TEST_SUITE_P(Families, RebuildFamiliesTest,
                         ::testing::Values(RecordKind::kKernel, RecordKind::kPlan,
                                           RecordKind::kTuning),
                         [](const ::testing::TestParamInfo<RecordKind>& info) {
                           return std::string(RecordKindName(info.param));
                         });

// "meta" (kernel usage, counters, the schema record) is rebuilt the same way; the kernels are
// untouched.
TEST(RebuildMetaTest, DamagedUsageBlockIsRebuilt) {
  TempDir dir;
  const std::string db_path = dir.Sub("cache");
  testing::FillFamilyAndCompact(db_path, RecordKind::kKernel, 400);
  const fs::path sst = testing::LargestSstOf(db_path, kMetaFamily);
  ASSERT_FALSE(sst.empty());
  std::string bytes = testing::ReadFile(sst);
  bytes[100] ^= 0x5a;  // in the first data block
  testing::WriteFile(sst, bytes);

  const FamilyRebuild r = RebuildTheOneDamagedFamily(db_path);
  EXPECT_EQ(r.family, kMetaFamily);
  EXPECT_GE(r.lost, 1);
  EXPECT_GE(r.kept, 200);  // the usage entries in the other blocks
  EXPECT_THAT(r.damage, HasSubstr("Corruption"));

  testing::LogCapture log;
  std::unique_ptr<RocksDbStore> store = OpenStore(db_path, &log);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(log.AtLeast(kLogWarning).empty()) << log.All();  // the index reads in full
  EXPECT_EQ(testing::CountIntactRecords(*store, RecordKind::kKernel, 400), 400);
}

// A rebuild killed after it dropped a family and before it ingested the family's file: the
// next writer to open the database ingests the file and removes it.
TEST(RebuildInterruptedTest, TheNextWriterIngestsTheFileLeftBehind) {
  TempDir dir;
  const std::string db_path = dir.Sub("cache");
  constexpr int kPlans = 20;
  testing::FillFamilyAndCompact(db_path, RecordKind::kPlan, kPlans);
  // What the rebuild had written: the records, in key order, in <path>/rebuild/plans.sst.
  std::vector<std::pair<std::string, std::string>> records;
  for (int i = 0; i < kPlans; ++i) {
    records.emplace_back(PlanKey(testing::PlanParts(testing::RecordName(RecordKind::kPlan, i))),
                         WrapPayload(testing::RecordPayload(RecordKind::kPlan, i)));
  }
  std::sort(records.begin(), records.end());
  fs::create_directories(fs::path(db_path) / "rebuild");
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(),
                                rocksdb::Options(DbOptions(), FamilyOptions(kPlansFamily)));
  ASSERT_TRUE(writer.Open(db_path + "/rebuild/plans.sst").ok());
  for (const auto& [key, value] : records) ASSERT_TRUE(writer.Put(key, value).ok());
  ASSERT_TRUE(writer.Finish().ok());
  // What it had done before it was killed: the family dropped (RocksDB directly).
  {
    std::vector<std::string> names;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(DbOptions(), db_path, &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const std::string& name : names) families.emplace_back(name, FamilyOptions(name));
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(DbOptions(), db_path, families, &handles, &db).ok());
    for (rocksdb::ColumnFamilyHandle* h : handles) {
      if (h->GetName() == kPlansFamily) {
        EXPECT_TRUE(db->DropColumnFamily(h).ok());
      }
      EXPECT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
    }
    EXPECT_TRUE(db->Close().ok());
    delete db;
  }

  std::unique_ptr<RocksDbStore> store = OpenStore(db_path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(testing::CountIntactRecords(*store, RecordKind::kPlan, kPlans), kPlans);
  EXPECT_FALSE(fs::exists(fs::path(db_path) / "rebuild"));
}

}  // namespace
}  // namespace pto::cache
