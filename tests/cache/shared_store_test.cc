// SharedStore (what OpenCache returns for a path): the writer and reader roles in one process,
// taking the writer role over, counters shared by every store of a path, a read-only base
// layer under a writable one, and a directory other users can write (read as data only).
#include "cache/shared_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_store.h"
#include "cache/inbox.h"
#include "gtest/gtest.h"
#include "tests/cache/cache_test_util.h"

namespace pto::cache {
namespace {

namespace fs = std::filesystem;
using testing::KernelParts;
using testing::LogCapture;
using testing::MakeKernel;
using testing::MakeTuning;
using testing::TempDir;
using testing::TuningParts;

class SharedStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<CacheStore> Open(const std::string& path, const std::string& base = "") {
    return testing::OpenWithoutMaintenance(path, base, log_);
  }
  static SharedStore& Shared(CacheStore& store) { return dynamic_cast<SharedStore&>(store); }
  std::vector<std::string> Warnings() const { return log_.AtLeast(kLogWarning); }

  TempDir dir_;
  std::string db_path_ = dir_.Sub("cache");
  LogCapture log_;
};

TEST_F(SharedStoreTest, ReaderTakesTheWriterRoleOverWhenTheWriterCloses) {
  std::unique_ptr<CacheStore> writer = Open(db_path_);
  std::unique_ptr<CacheStore> reader = Open(db_path_);
  ASSERT_NE(writer, nullptr);
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(writer->Role(), "writer");
  EXPECT_EQ(reader->Role(), "reader");

  ASSERT_TRUE(writer->PutKernel(MakeKernel("w")).ok());
  ASSERT_TRUE(reader->PutKernel(MakeKernel("r")).ok());
  Shared(*reader).Maintain();  // the writer still runs: no takeover
  EXPECT_EQ(reader->Role(), "reader");
  EXPECT_TRUE(reader->GetKernel(KernelParts("w"))->has_value());

  writer.reset();
  Shared(*reader).Maintain();
  EXPECT_EQ(reader->Role(), "writer");
  EXPECT_TRUE(inbox::List(db_path_).empty());  // the new writer ingested what it handed over
  for (const char* name : {"w", "r"}) {
    auto k = reader->GetKernel(KernelParts(name));
    ASSERT_TRUE(k.ok() && k->has_value()) << name;
    EXPECT_EQ((*k)->object(), MakeKernel(name).object());
  }
  // A store opened now is a reader of the new writer and sees both.
  std::unique_ptr<CacheStore> late = Open(db_path_);
  EXPECT_EQ(late->Role(), "reader");
  EXPECT_TRUE(late->GetKernel(KernelParts("r"))->has_value());
  EXPECT_TRUE(Warnings().empty()) << log_.All();
}

// Threads use a writer and a reader of one path while both stores' maintenance threads run
// every few milliseconds (ingesting, catching up, taking over when the writer closes midway).
TEST_F(SharedStoreTest, ThreadsOnAWriterAndAReaderWhileMaintenanceRuns) {
  auto open_fast = [&]() {
    CacheOptions options;
    options.path = db_path_;
    options.log = log_.Sink();
    options.maintenance_interval_ms = 2;
    absl::StatusOr<std::unique_ptr<CacheStore>> store = OpenCache(options);
    EXPECT_TRUE(store.ok()) << store.status();
    return std::move(*store);
  };
  std::unique_ptr<CacheStore> writer = open_fast();
  std::unique_ptr<CacheStore> reader = open_fast();
  ASSERT_EQ(reader->Role(), "reader");
  constexpr int kThreads = 4, kPerThread = 40;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string name = "t" + std::to_string(t) + "-" + std::to_string(i);
        CacheStore& store = (i % 2 == 0 || t == 0) ? *reader : *writer;
        failures += !store.PutKernel(MakeKernel(name, 256)).ok();
        auto k = store.GetKernel(KernelParts(name));
        failures += !(k.ok() && k->has_value());
      }
    });
  }
  // The writer goes away while the threads still use the reader (the writer's own users are
  // done with it first: thread 0 only uses the reader).
  for (int t = 1; t < kThreads; ++t) threads[t].join();
  writer.reset();
  threads[0].join();
  EXPECT_EQ(failures.load(), 0);
  // Its maintenance thread takes the role over (within 10 s even on a loaded machine).
  for (int i = 0; i < 1000 && reader->Role() != "writer"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(reader->Role(), "writer");
  reader.reset();
  std::unique_ptr<CacheStore> again = Open(db_path_);
  int found = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      found += again->GetKernel(KernelParts("t" + std::to_string(t) + "-" + std::to_string(i)))
                   ->has_value();
    }
  }
  EXPECT_EQ(found, kThreads * kPerThread);
  EXPECT_TRUE(Warnings().empty()) << log_.All();
}

TEST_F(SharedStoreTest, CountersOfEveryStoreAddUp) {
  std::unique_ptr<CacheStore> writer = Open(db_path_);
  std::unique_ptr<CacheStore> reader = Open(db_path_);
  ASSERT_TRUE(writer->PutKernel(MakeKernel("a")).ok());
  ASSERT_TRUE(writer->GetKernel(KernelParts("a"))->has_value());
  ASSERT_FALSE(writer->GetKernel(KernelParts("nope"))->has_value());
  ASSERT_TRUE(reader->GetKernel(KernelParts("a"))->has_value());
  ASSERT_TRUE(reader->PutTuning(MakeTuning("t")).ok());

  Shared(*reader).Maintain();  // hands its counters to the writer
  Shared(*writer).Maintain();  // ingests them and adds its own
  const CacheStats total = writer->TotalStats();
  EXPECT_EQ(total.hits, 2);
  EXPECT_EQ(total.misses, 1);
  EXPECT_EQ(total.puts, 2);
  EXPECT_EQ(total.corrupt, 0);
  EXPECT_EQ(writer->stats().hits, 1);  // this store's own

  // They persist: a later process (here: store) starts from them.
  reader.reset();
  writer.reset();
  std::unique_ptr<CacheStore> again = Open(db_path_);
  ASSERT_TRUE(again->GetKernel(KernelParts("a"))->has_value());
  EXPECT_EQ(again->TotalStats().hits, 3);
}

TEST_F(SharedStoreTest, ReadOnlyBaseUnderAWritableLayer) {
  const std::string base_path = dir_.Sub("base");
  {
    std::unique_ptr<CacheStore> base = Open(base_path);
    ASSERT_TRUE(base->PutKernel(MakeKernel("shipped")).ok());
    ASSERT_TRUE(base->PutTuning(MakeTuning("shipped")).ok());
  }
  // Baked into an image: nobody may write to it.
  std::vector<std::pair<std::string, fs::file_time_type>> before;
  for (const fs::directory_entry& e : fs::directory_iterator(base_path)) {
    before.emplace_back(e.path().filename().string(), e.last_write_time());
  }
  ASSERT_EQ(::chmod(base_path.c_str(), 0555), 0);

  {
    std::unique_ptr<CacheStore> store = Open(db_path_, base_path);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->Role(), "writer");
    EXPECT_TRUE(store->code_trusted());
    auto shipped = store->GetKernel(KernelParts("shipped"));
    ASSERT_TRUE(shipped.ok() && shipped->has_value()) << shipped.status();
    EXPECT_EQ((*shipped)->object(), MakeKernel("shipped").object());
    EXPECT_TRUE(store->GetTuning(TuningParts("shipped"))->has_value());
    ASSERT_TRUE(store->PutKernel(MakeKernel("local")).ok());
    EXPECT_TRUE(store->GetKernel(KernelParts("local"))->has_value());

    std::vector<std::pair<std::string, bool>> scanned;
    ASSERT_TRUE(store
                    ->Scan(RecordKind::kKernel,
                           [&](const ScannedRecord& r) {
                             EXPECT_TRUE(r.problem.empty()) << r.problem;
                             scanned.emplace_back(r.key, r.from_base);
                           })
                    .ok());
    ASSERT_EQ(scanned.size(), 2u);
    int from_base = 0;
    for (const auto& [key, base] : scanned) from_base += base;
    EXPECT_EQ(from_base, 1);
  }
  ASSERT_EQ(::chmod(base_path.c_str(), 0755), 0);
  // The write went to the writable layer only; the base's files are untouched.
  std::vector<std::pair<std::string, fs::file_time_type>> after;
  for (const fs::directory_entry& e : fs::directory_iterator(base_path)) {
    after.emplace_back(e.path().filename().string(), e.last_write_time());
  }
  EXPECT_EQ(before, after);
  std::unique_ptr<CacheStore> base = Open(base_path);
  EXPECT_FALSE(base->GetKernel(KernelParts("local"))->has_value());
  std::unique_ptr<CacheStore> top = Open(db_path_);
  EXPECT_FALSE(top->GetKernel(KernelParts("shipped"))->has_value());
  EXPECT_TRUE(top->GetKernel(KernelParts("local"))->has_value());
  EXPECT_TRUE(Warnings().empty()) << log_.All();
}

TEST_F(SharedStoreTest, MissingBaseIsLeftOutWithOneWarning) {
  std::unique_ptr<CacheStore> store = Open(db_path_, dir_.Sub("no-such-base"));
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->persistent());
  ASSERT_TRUE(store->PutKernel(MakeKernel("a")).ok());
  const std::vector<std::string> warnings = Warnings();
  ASSERT_EQ(warnings.size(), 1u) << log_.All();
  EXPECT_NE(warnings[0].find("cannot use the base cache at '" + dir_.Sub("no-such-base") + "'"),
            std::string::npos)
      << warnings[0];
}

TEST_F(SharedStoreTest, DirectoryOtherUsersCanWriteIsNotUsedButCanBeReadAsData) {
  {
    std::unique_ptr<CacheStore> store = Open(db_path_);
    ASSERT_TRUE(store->PutKernel(MakeKernel("k")).ok());
    ASSERT_TRUE(store->PutTuning(MakeTuning("t")).ok());
  }
  // Group-writable counts: another user of the group could plant links in it.
  ASSERT_EQ(::chmod(db_path_.c_str(), 0775), 0);
  const std::string why = "'" + db_path_ + "' can be written by other users (mode 0775)";
  {
    std::unique_ptr<CacheStore> store = Open(db_path_);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->Describe(), "memory");
    const std::vector<std::string> warnings = Warnings();
    ASSERT_EQ(warnings.size(), 1u) << log_.All();
    EXPECT_EQ(warnings[0], "pto cache: cannot use the cache database at '" + db_path_ +
                               "': " + why +
                               ", and pto writes only to a cache directory that no other user "
                               "can change; continuing with a memory-only cache (nothing "
                               "compiled in this process will persist)");
  }
  log_.Clear();
  CacheOptions options;
  options.path = db_path_;
  options.log = log_.Sink();
  absl::StatusOr<std::unique_ptr<CacheStore>> refused =
      OpenPersistentCache(options, UnsafeDirectory::kRefuse);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(),
            why + ", and pto writes only to a cache directory that no other user can change");

  // Read as data only: the tuning record, never the code; nothing written.
  std::vector<std::string> before;
  for (const fs::directory_entry& e : fs::directory_iterator(db_path_)) {
    before.push_back(e.path().filename().string() + " " +
                     std::to_string(e.is_regular_file() ? e.file_size() : 0));
  }
  std::sort(before.begin(), before.end());
  {
    absl::StatusOr<std::unique_ptr<CacheStore>> data =
        OpenPersistentCache(options, UnsafeDirectory::kReadDataOnly);
    ASSERT_TRUE(data.ok()) << data.status();
    EXPECT_EQ((*data)->Role(), "read-only");
    EXPECT_FALSE((*data)->code_trusted());
    EXPECT_EQ((*data)->WhyCodeUntrusted(), why);
    EXPECT_TRUE((*data)->GetTuning(TuningParts("t"))->has_value());
    EXPECT_EQ((*data)->PutTuning(MakeTuning("u")).code(), absl::StatusCode::kFailedPrecondition);
    const std::vector<std::string> warnings = Warnings();
    ASSERT_EQ(warnings.size(), 1u) << log_.All();
    EXPECT_EQ(warnings[0], "pto cache: reading '" + db_path_ +
                               "' as data only (nothing is written to it, and no object code is "
                               "taken from it): " +
                               why);
  }
  std::vector<std::string> after;
  for (const fs::directory_entry& e : fs::directory_iterator(db_path_)) {
    after.push_back(e.path().filename().string() + " " +
                    std::to_string(e.is_regular_file() ? e.file_size() : 0));
  }
  std::sort(after.begin(), after.end());
  EXPECT_EQ(after, before);
}

}  // namespace
}  // namespace pto::cache
