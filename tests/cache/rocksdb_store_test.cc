// RocksDbStore on real databases on disk: reopening (in this process and in another one),
// damage to the files (SST and MANIFEST: flipped bytes, truncation), and the cases where the
// database cannot be used at all (locked, unwritable directory, a file in the way, another
// schema version), which must degrade to memory-only with exactly one warning.
#include "cache/rocksdb_store.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cache/cache_key.h"
#include "cache/cache_store.h"
#include "cache/checksum.h"
#include "cache/envelope.h"
#include "cache/inbox.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "tests/cache/cache_test_util.h"

namespace pto::cache {
namespace {

namespace fs = std::filesystem;
using testing::KernelParts;
using testing::LogCapture;
using testing::MakeKernel;
using testing::MakePlan;
using testing::MakeTuning;
using testing::PlanParts;
using testing::TempDir;
using testing::TuningParts;

class RocksDbStoreTest : public ::testing::Test {
 protected:
  CacheOptions Options() {
    CacheOptions options;
    options.path = db_path_;
    options.log = log_.Sink();
    return options;
  }
  std::unique_ptr<RocksDbStore> OpenDb() {
    absl::StatusOr<std::unique_ptr<RocksDbStore>> store = RocksDbStore::Open(Options());
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }
  std::unique_ptr<CacheStore> OpenAny() {
    absl::StatusOr<std::unique_ptr<CacheStore>> store = OpenCache(Options());
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }
  std::vector<std::string> Warnings() const { return log_.AtLeast(kLogWarning); }

  void RawPut(const std::string& family, const std::string& key, const std::string& value) {
    testing::RawPut(db_path_, family, key, value);
  }

  // Stores kernels "a" (with an 8 KiB object) and "b", a tuning and a plan record, then
  // flushes and compacts so that every value is in an SST file, and closes the database.
  void FillAndCompact() {
    std::unique_ptr<RocksDbStore> store = OpenDb();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutKernel(MakeKernel("a", 8192)).ok());
    ASSERT_TRUE(store->PutKernel(MakeKernel("b", 8192)).ok());
    ASSERT_TRUE(store->PutTuning(MakeTuning("a")).ok());
    ASSERT_TRUE(store->PutPlan(MakePlan("a")).ok());
    ASSERT_TRUE(store->Flush().ok());
    ASSERT_TRUE(store->CompactAll().ok());
  }

  // A lookup on a damaged database: a miss or exactly the record stored, never another one.
  void ExpectMissOrOriginal(CacheStore& store, const std::string& name) {
    auto r = store.GetKernel(KernelParts(name));
    ASSERT_TRUE(r.ok()) << r.status();
    std::cerr << "[ lookup   ] " << name << ": " << (r->has_value() ? "hit" : "miss") << "\n";
    if (r->has_value()) {
      EXPECT_EQ((*r)->object(), MakeKernel(name, 8192).object()) << name;
    }
  }

  // After damage: the store still takes writes, compacts, and keeps them across a reopen.
  void ExpectHealthyAfterRewrite(std::unique_ptr<CacheStore> store) {
    ASSERT_TRUE(store->PutKernel(MakeKernel("a", 8192)).ok());
    auto r = store->GetKernel(KernelParts("a"));
    ASSERT_TRUE(r.ok() && r->has_value()) << r.status();
    if (!store->persistent()) return;
    // OpenCache's store is a SharedStore: flush and compact through the database itself.
    store.reset();
    std::unique_ptr<RocksDbStore> db = OpenDb();
    ASSERT_NE(db, nullptr);
    EXPECT_TRUE(db->Flush().ok());
    absl::Status compacted = db->CompactAll();
    EXPECT_TRUE(compacted.ok()) << compacted;
    db.reset();
    std::unique_ptr<RocksDbStore> reopened = OpenDb();
    ASSERT_NE(reopened, nullptr);
    auto again = reopened->GetKernel(KernelParts("a"));
    ASSERT_TRUE(again.ok() && again->has_value()) << again.status();
  }

  TempDir dir_;
  std::string db_path_ = dir_.Sub("cache");
  LogCapture log_;
};

TEST_F(RocksDbStoreTest, CreatesColumnFamiliesAndSchema) {
  {
    std::unique_ptr<RocksDbStore> store = OpenDb();
    ASSERT_NE(store, nullptr);
    EXPECT_TRUE(store->persistent());
    EXPECT_EQ(store->Describe(), "rocksdb:" + db_path_ + " (writer)");
    EXPECT_EQ(store->Role(), "writer");
  }
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), db_path_, &names).ok());
  for (const char* family : {"kernels", "plans", "tuning", "meta"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), family), names.end()) << family;
  }
  EXPECT_TRUE(Warnings().empty()) << log_.All();
}

TEST_F(RocksDbStoreTest, ReopenInTheSameProcessIsAHit) {
  {
    std::unique_ptr<RocksDbStore> store = OpenDb();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutKernel(MakeKernel("a")).ok());
    ASSERT_TRUE(store->PutTuning(MakeTuning("a")).ok());
    ASSERT_TRUE(store->PutPlan(MakePlan("a")).ok());
    ASSERT_TRUE(store->GetKernel(KernelParts("a"))->has_value());
  }
  std::unique_ptr<RocksDbStore> store = OpenDb();
  ASSERT_NE(store, nullptr);
  auto k = store->GetKernel(KernelParts("a"));
  ASSERT_TRUE(k.ok() && k->has_value()) << k.status();
  EXPECT_EQ((*k)->object(), MakeKernel("a").object());
  EXPECT_EQ((*k)->hits(), 2);  // usage is persisted
  EXPECT_TRUE(store->GetTuning(TuningParts("a"))->has_value());
  EXPECT_TRUE(store->GetPlan(PlanParts("a"))->has_value());
  const CacheStats s = store->stats();
  EXPECT_EQ(s.entries, 3);
  EXPECT_EQ(s.hits, 3);
  EXPECT_EQ(s.misses, 0);
}

std::string RunProbe(const std::string& db_path, const std::string& kernel) {
  const std::string command = std::string(CACHE_PROBE) + " '" + db_path + "' " + kernel + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof(buf), pipe) != nullptr) out += buf;
  const int status = pclose(pipe);
  if (status != 0) out += "exit status " + std::to_string(status);
  return out;
}

TEST_F(RocksDbStoreTest, AnotherProcessSeesTheRecord) {
  {
    std::unique_ptr<RocksDbStore> store = OpenDb();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutKernel(MakeKernel("a")).ok());
  }
  const std::string out = RunProbe(db_path_, "a");
  EXPECT_EQ(out, "hit " + MakeKernel("a").symbol() + "\nstore rocksdb:" + db_path_ + " (writer)\n");
  EXPECT_EQ(RunProbe(db_path_, "zz"), "miss\nstore rocksdb:" + db_path_ + " (writer)\n");
}

// Processes that open a fresh database at the same moment race for the writer role: every
// one of them opens it (the losers of RocksDB's LOCK become readers) and none warns.
TEST_F(RocksDbStoreTest, ProcessesStartingTogetherAllOpenTheDatabase) {
  constexpr int kProcesses = 6;
  for (int round = 0; round < 4; ++round) {  // a lost race is likely but not certain per round
    const std::string path = dir_.Sub("race" + std::to_string(round));
    std::vector<FILE*> pipes;
    for (int i = 0; i < kProcesses; ++i) {
      const std::string command = std::string(CACHE_PROBE) + " '" + path + "' a 2>&1";
      pipes.push_back(popen(command.c_str(), "r"));
      ASSERT_NE(pipes.back(), nullptr);
    }
    int writers = 0, readers = 0;
    for (FILE* pipe : pipes) {
      std::string out;
      char buf[512];
      while (fgets(buf, sizeof(buf), pipe) != nullptr) out += buf;
      EXPECT_EQ(pclose(pipe), 0) << out;
      EXPECT_EQ(out.find("warning"), std::string::npos) << out;
      writers += out.find(" (writer)") != std::string::npos;
      readers += out.find(" (reader)") != std::string::npos;
    }
    EXPECT_EQ(writers + readers, kProcesses) << "round " << round;
    EXPECT_GE(writers, 1) << "round " << round;
  }
}

// While this process holds the database (the writer), another process opens it as a reader
// (a RocksDB secondary instance): it sees what the writer has written, even records still in
// the writer's memtable and WAL, and no warning is logged.
TEST_F(RocksDbStoreTest, AnotherProcessWhileTheWriterRunsIsAReaderAndHits) {
  std::unique_ptr<RocksDbStore> store = OpenDb();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutKernel(MakeKernel("a")).ok());
  const std::string out = RunProbe(db_path_, "a");
  EXPECT_EQ(out, "hit " + MakeKernel("a").symbol() + "\nstore rocksdb:" + db_path_ + " (reader)\n");
}

// A second store on the same path in this process is a reader too: its writes go through the
// inbox, it reads them back at once, and the writer has them once it has ingested the inbox.
TEST_F(RocksDbStoreTest, SecondStoreInThisProcessIsAReaderThatHandsWritesOver) {
  std::unique_ptr<RocksDbStore> first = OpenDb();
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(first->PutKernel(MakeKernel("a")).ok());

  absl::StatusOr<std::unique_ptr<RocksDbStore>> second = RocksDbStore::Open(Options());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable) << second.status();
  EXPECT_NE(second.status().message().find("lock"), std::string::npos) << second.status();
  log_.Clear();

  std::unique_ptr<CacheStore> reader = OpenAny();
  ASSERT_NE(reader, nullptr);
  EXPECT_TRUE(reader->persistent());
  EXPECT_EQ(reader->Role(), "reader");
  EXPECT_EQ(reader->Describe(), "rocksdb:" + db_path_ + " (reader)");
  EXPECT_TRUE(Warnings().empty()) << log_.All();
  auto a = reader->GetKernel(KernelParts("a"));
  ASSERT_TRUE(a.ok() && a->has_value()) << a.status();
  EXPECT_EQ((*a)->object(), MakeKernel("a").object());

  ASSERT_TRUE(reader->PutKernel(MakeKernel("b")).ok());
  ASSERT_TRUE(reader->PutTuning(MakeTuning("b")).ok());
  EXPECT_TRUE(reader->GetKernel(KernelParts("b"))->has_value());
  EXPECT_FALSE(first->GetKernel(KernelParts("b"))->has_value());  // not ingested yet
  absl::StatusOr<int> ingested = first->IngestInbox();
  ASSERT_TRUE(ingested.ok()) << ingested.status();
  EXPECT_GE(*ingested, 1);
  auto b = first->GetKernel(KernelParts("b"));
  ASSERT_TRUE(b.ok() && b->has_value()) << b.status();
  EXPECT_EQ((*b)->object(), MakeKernel("b").object());
  EXPECT_TRUE(first->GetTuning(TuningParts("b"))->has_value());
  EXPECT_TRUE(inbox::List(db_path_).empty());
  EXPECT_TRUE(Warnings().empty()) << log_.All();
}

// chmod 0555 stops writes only for users other than root, and CI runs tests as root. As root
// the directory is made unusable another real way: its would-be parent is a regular file, so
// RocksDB cannot create it (ENOTDIR), whoever runs it.
TEST_F(RocksDbStoreTest, UnwritableDirectoryFallsBackToMemoryWithOneWarning) {
  if (geteuid() != 0) {
    const fs::path parent = dir_.path() / "readonly";
    fs::create_directory(parent);
    ASSERT_EQ(chmod(parent.c_str(), 0555), 0);
    db_path_ = (parent / "cache").string();
  } else {
    std::cerr << "[ note     ] running as root: chmod 0555 would not stop writes; using a "
                 "path whose parent is a regular file instead\n";
    testing::WriteFile(dir_.path() / "not_a_dir", "x");
    db_path_ = (dir_.path() / "not_a_dir" / "cache").string();
  }
  std::unique_ptr<CacheStore> store = OpenAny();
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(store->persistent());
  const std::vector<std::string> warnings = Warnings();
  ASSERT_EQ(warnings.size(), 1u) << log_.All();
  EXPECT_NE(warnings[0].find("'" + db_path_ + "'"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("IO error"), std::string::npos) << warnings[0];
  ASSERT_TRUE(store->PutTuning(MakeTuning("a")).ok());
  EXPECT_TRUE(store->GetTuning(TuningParts("a"))->has_value());
}

// A disk that fills up while the cache is in use (simulated in a child process with
// RLIMIT_FSIZE, which fails writes with EFBIG even for root): the Puts still succeed, into
// memory, with one warning, and everything stored stays readable.
TEST_F(RocksDbStoreTest, WritesFailingMidRunDegradeToMemoryWithOneWarning) {
  const std::string out = RunProbe(db_path_, "--fill-past-file-size-limit");
  EXPECT_TRUE(out.starts_with("puts ok 64\nhits 64\npersistent 0\nwarning ")) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 4) << out;
  EXPECT_NE(out.find("cannot write to the cache database at '" + db_path_ + "'"), std::string::npos)
      << out;
  // What was acknowledged before the failure is still there for the next process.
  std::unique_ptr<RocksDbStore> store = OpenDb();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->GetKernel(KernelParts("f0"))->has_value());
}

TEST_F(RocksDbStoreTest, PathThatIsAFileFallsBackToMemoryWithOneWarning) {
  testing::WriteFile(db_path_, "not a database");
  std::unique_ptr<CacheStore> store = OpenAny();
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(store->persistent());
  const std::vector<std::string> warnings = Warnings();
  ASSERT_EQ(warnings.size(), 1u) << log_.All();
  EXPECT_NE(warnings[0].find("'" + db_path_ + "'"), std::string::npos) << warnings[0];
  EXPECT_EQ(testing::ReadFile(db_path_), "not a database");
}

TEST_F(RocksDbStoreTest, InvalidOptionsAreTheOnlyError) {
  CacheOptions options = Options();
  options.capacity_bytes = 0;
  absl::StatusOr<std::unique_ptr<CacheStore>> store = OpenCache(options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(store.status().message().find("capacity_bytes must be positive, got 0"),
            std::string::npos)
      << store.status();
  options.capacity_bytes = -5;
  EXPECT_EQ(OpenCache(options).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(log_.All().empty()) << log_.All();

  absl::StatusOr<std::unique_ptr<RocksDbStore>> no_path = RocksDbStore::Open(CacheOptions());
  EXPECT_EQ(no_path.status().code(), absl::StatusCode::kInvalidArgument);

  CacheOptions memory;  // no path: memory only, silently
  memory.log = log_.Sink();
  absl::StatusOr<std::unique_ptr<CacheStore>> mem = OpenCache(memory);
  ASSERT_TRUE(mem.ok());
  EXPECT_FALSE((*mem)->persistent());
  EXPECT_TRUE(log_.All().empty()) << log_.All();
}

TEST_F(RocksDbStoreTest, AnotherSchemaVersionIsNotOpened) {
  { ASSERT_NE(OpenDb(), nullptr); }
  proto::CacheMeta meta;
  meta.set_schema_version(999);
  meta.set_created_by("pto 9.0");
  RawPut("meta", "schema", WrapPayload(meta.SerializeAsString()));

  absl::StatusOr<std::unique_ptr<RocksDbStore>> direct = RocksDbStore::Open(Options());
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(direct.status().message().find("schema version 999"), std::string::npos)
      << direct.status();

  std::unique_ptr<CacheStore> store = OpenAny();
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(store->persistent());
  const std::vector<std::string> warnings = Warnings();
  ASSERT_EQ(warnings.size(), 1u) << log_.All();
  EXPECT_NE(warnings[0].find("schema version 999"), std::string::npos) << warnings[0];
}

// Damaged values (written under the right key with RocksDB directly): each is a miss counted
// as corrupt, deleted, and rewritten by the next Put.
TEST_F(RocksDbStoreTest, DamagedValuesAreCorruptMissesAndRewritten) {
  const std::string key = KernelKey(KernelParts("a"));
  const std::string good = WrapPayload(MakeKernel("a").SerializeAsString());
  std::string bad_sum = good;
  bad_sum[16] ^= 1;  // the checksum field
  std::string future_format = good;
  future_format[4] = static_cast<char>(kValueFormatVersion + 1);
  proto::Envelope older;  // value format 1, as an older pto wrote it
  older.set_schema_version(1);
  older.set_payload(MakeKernel("a").SerializeAsString());
  older.set_checksum(Checksum64(older.payload()));
  proto::KernelRecord future_record = MakeKernel("a");
  future_record.set_schema_version(kSchemaVersion + 1);
  proto::KernelRecord other = MakeKernel("b");  // a sound record under the wrong key
  other.set_schema_version(kSchemaVersion);
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x10;

  { ASSERT_NE(OpenDb(), nullptr); }  // the database exists
  const std::pair<const char*, std::string> cases[] = {
      {"truncated", good.substr(0, good.size() / 2)},
      {"truncated to nothing", ""},
      {"flipped payload byte", flipped},
      {"bad checksum", bad_sum},
      {"unknown value format", future_format},
      {"older value format 1", older.SerializeAsString()},
      {"unknown record schema", WrapPayload(future_record.SerializeAsString())},
      {"record of another key", WrapPayload(other.SerializeAsString())},
      {"not an envelope", "garbage \xff\xfe\x01"},
  };
  for (const auto& [what, value] : cases) {
    SCOPED_TRACE(what);
    RawPut("kernels", key, value);
    std::unique_ptr<RocksDbStore> store = OpenDb();
    ASSERT_NE(store, nullptr);
    auto r = store->GetKernel(KernelParts("a"));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->has_value());
    EXPECT_EQ(store->stats().corrupt, 1);
    EXPECT_EQ(store->stats().misses, 1);
    // Deleted: the next lookup is a plain miss.
    EXPECT_FALSE(store->GetKernel(KernelParts("a"))->has_value());
    EXPECT_EQ(store->stats().corrupt, 1);
    ASSERT_TRUE(store->PutKernel(MakeKernel("a")).ok());
    auto hit = store->GetKernel(KernelParts("a"));
    ASSERT_TRUE(hit.ok() && hit->has_value());
    EXPECT_EQ((*hit)->object(), MakeKernel("a").object());
  }
  // Tuning and plan values are checked the same way.
  RawPut("tuning", TuningKey(TuningParts("a")), "junk");
  RawPut("plans", PlanKey(PlanParts("a")), WrapPayload("junk"));
  std::unique_ptr<RocksDbStore> store = OpenDb();
  ASSERT_NE(store, nullptr);
  EXPECT_FALSE(store->GetTuning(TuningParts("a"))->has_value());
  EXPECT_FALSE(store->GetPlan(PlanParts("a"))->has_value());
  EXPECT_EQ(store->stats().corrupt, 2);
}

TEST_F(RocksDbStoreTest, FlippedBytesInAnSstFileAreAMissNeverACrash) {
  FillAndCompact();
  const std::string object = MakeKernel("a", 8192).object();
  const std::string needle = object.substr(4000, 64);
  const fs::path sst = testing::SstContaining(dir_.path() / "cache", needle);
  ASSERT_FALSE(sst.empty()) << "kernel a's object bytes are in no SST file";
  std::string bytes = testing::ReadFile(sst);
  const size_t at = bytes.find(needle);
  for (size_t i = 0; i < 16; ++i) bytes[at + 24 + i] ^= 0x5a;
  testing::WriteFile(sst, bytes);

  std::unique_ptr<CacheStore> store = OpenAny();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->persistent()) << log_.All();
  auto r = store->GetKernel(KernelParts("a"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->has_value());
  EXPECT_EQ(store->stats().corrupt, 1);
  EXPECT_FALSE(Warnings().empty());
  std::cerr << "[ log      ]\n" << log_.All();
  ExpectMissOrOriginal(*store, "b");
  EXPECT_TRUE(store->GetTuning(TuningParts("a"))->has_value());  // other families untouched
  ExpectHealthyAfterRewrite(std::move(store));
}

TEST_F(RocksDbStoreTest, TruncatedSstFileIsAMissNeverACrash) {
  FillAndCompact();
  const fs::path sst =
      testing::SstContaining(dir_.path() / "cache", MakeKernel("a", 8192).object().substr(0, 64));
  ASSERT_FALSE(sst.empty());
  fs::resize_file(sst, fs::file_size(sst) / 2);

  std::unique_ptr<CacheStore> store = OpenAny();
  ASSERT_NE(store, nullptr);
  std::cerr << "[ log      ]\n" << log_.All();
  ASSERT_EQ(Warnings().size(), 1u) << log_.All();
  EXPECT_NE(Warnings()[0].find("'" + db_path_ + "'"), std::string::npos);
  ExpectMissOrOriginal(*store, "a");
  ExpectMissOrOriginal(*store, "b");
  ExpectHealthyAfterRewrite(std::move(store));
}

class ManifestDamageTest : public RocksDbStoreTest,
                           public ::testing::WithParamInterface<const char*> {};

TEST_P(ManifestDamageTest, DamagedManifestNeverCrashes) {
  FillAndCompact();
  const std::vector<fs::path> manifests =
      testing::FilesMatching(dir_.path() / "cache", "MANIFEST-", "");
  ASSERT_EQ(manifests.size(), 1u);
  std::string bytes = testing::ReadFile(manifests[0]);
  const std::string damage = GetParam();
  if (damage == "truncated") {
    bytes.resize(bytes.size() / 3);
  } else if (damage == "empty") {
    bytes.clear();
  } else {
    for (size_t i = bytes.size() / 4; i < bytes.size() / 4 + 8; ++i) bytes[i] ^= 0xff;
  }
  testing::WriteFile(manifests[0], bytes);

  std::unique_ptr<CacheStore> store = OpenAny();
  ASSERT_NE(store, nullptr);
  std::cerr << "[ log      ]\n" << log_.All();
  ExpectMissOrOriginal(*store, "a");
  ExpectMissOrOriginal(*store, "b");
  auto tuning = store->GetTuning(TuningParts("a"));
  ASSERT_TRUE(tuning.ok()) << tuning.status();
  if (tuning->has_value()) {
    EXPECT_EQ((*tuning)->config(), MakeTuning("a").config());
  }
  const std::vector<std::string> warnings = Warnings();
  if (damage == "truncated") {
    // A MANIFEST cut short looks to RocksDB like a crash during its last write: it recovers
    // to the last complete version edit, silently (later records are misses, never wrong).
    EXPECT_LE(warnings.size(), 1u) << log_.All();
  } else {
    // Unreadable: repaired from the SST files, with one warning.
    ASSERT_EQ(warnings.size(), 1u) << log_.All();
    EXPECT_NE(warnings[0].find("'" + db_path_ + "'"), std::string::npos);
    EXPECT_NE(warnings[0].find("MANIFEST"), std::string::npos);
  }
  ExpectHealthyAfterRewrite(std::move(store));
}

INSTANTIATE_TEST_SUITE_P(Damage, ManifestDamageTest,
                         ::testing::Values("truncated", "empty", "flipped"));

// The MANIFEST gone (deleted, or CURRENT naming one that does not exist) or CURRENT gone while
// the table files remain: RocksDB reports the first two as an I/O error ("No such file or
// directory"), which used to leave every later run memory-only. They are damage: repaired from
// the table files and the write-ahead log, with one warning, and every record is kept.
class LostManifestTest : public RocksDbStoreTest,
                         public ::testing::WithParamInterface<const char*> {};

TEST_P(LostManifestTest, IsRepairedWithOneWarningAndKeepsTheRecords) {
  FillAndCompact();
  {
    std::unique_ptr<RocksDbStore> store = OpenDb();  // a record only in the write-ahead log
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutTuning(MakeTuning("wal")).ok());
  }
  const fs::path dir = dir_.path() / "cache";
  const std::string manifest =
      std::string(absl::StripAsciiWhitespace(testing::ReadFile(dir / "CURRENT")));
  ASSERT_TRUE(manifest.starts_with("MANIFEST-")) << manifest;
  const std::string damage = GetParam();
  std::string error;
  if (damage == "manifest deleted") {
    for (const fs::path& f : testing::FilesMatching(dir, "MANIFEST-", "")) fs::remove(f);
    error =
        "IO error: No such file or directory: While opening a file for sequentially "
        "reading: " +
        db_path_ + "/" + manifest + ": No such file or directory";
  } else if (damage == "current names a missing manifest") {
    testing::WriteFile(dir / "CURRENT", "MANIFEST-000999\n");
    error =
        "IO error: No such file or directory: While opening a file for sequentially "
        "reading: " +
        db_path_ + "/MANIFEST-000999: No such file or directory";
  } else {
    fs::remove(dir / "CURRENT");
    error = "Corruption: CURRENT is missing from " + db_path_ + ", which holds table files";
  }
  log_.Clear();

  std::unique_ptr<CacheStore> store = OpenAny();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->persistent());
  EXPECT_EQ(store->Role(), "writer");
  const std::vector<std::string> warnings = Warnings();
  ASSERT_EQ(warnings.size(), 1u) << log_.All();
  EXPECT_EQ(warnings[0], "pto cache: the cache database at '" + db_path_ + "' was damaged (" +
                             error +
                             "); repaired it, unreadable files are in its lost/ directory: "
                             "kernels stored in them will be recompiled");
  for (const char* name : {"a", "b"}) {
    auto k = store->GetKernel(KernelParts(name));
    ASSERT_TRUE(k.ok() && k->has_value()) << name << " " << k.status();
    EXPECT_EQ((*k)->object(), MakeKernel(name, 8192).object());
  }
  for (const char* name : {"a", "wal"}) {
    auto t = store->GetTuning(TuningParts(name));
    ASSERT_TRUE(t.ok() && t->has_value()) << name << " " << t.status();
    EXPECT_EQ((*t)->config(), MakeTuning(name).config());
  }
  EXPECT_TRUE(store->GetPlan(PlanParts("a"))->has_value());
  EXPECT_EQ(store->stats().corrupt, 0);
  ExpectHealthyAfterRewrite(std::move(store));
  EXPECT_EQ(Warnings().size(), 1u) << log_.All();  // the reopen is clean
}

INSTANTIATE_TEST_SUITE_P(Lost, LostManifestTest,
                         ::testing::Values("manifest deleted", "current names a missing manifest",
                                           "current deleted"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == ' ' ? '_' : c;
                           return name;
                         });

// A Get that meets a damaged block of the plans file drops the file and writes the records it
// can still read again, those past the damaged block too (found by seeking past it): only the
// damaged block's records are lost.
TEST_F(RocksDbStoreTest, DamagedPlanBlockLosesOnlyItsOwnRecords) {
  constexpr int kPlans = 160;
  testing::FillFamilyAndCompact(db_path_, RecordKind::kPlan, kPlans);
  std::vector<std::pair<std::string, int>> keys;
  for (int i = 0; i < kPlans; ++i) {
    keys.emplace_back(PlanKey(PlanParts(testing::RecordName(RecordKind::kPlan, i))), i);
  }
  std::sort(keys.begin(), keys.end());
  const int victim = keys[kPlans / 2].second;
  ASSERT_FALSE(
      testing::DamageSstAt(db_path_, testing::RecordNeedle(RecordKind::kPlan, victim)).empty());

  std::unique_ptr<RocksDbStore> store = OpenDb();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(testing::ReadRecord(*store, RecordKind::kPlan, victim), "");
  EXPECT_EQ(store->stats().corrupt, 1);
  std::cerr << "[ log      ]\n" << log_.All();
  // At open: the plans cannot all be indexed; at the Get: the damage, then the file dropped.
  const std::vector<std::string> warnings = Warnings();
  ASSERT_EQ(warnings.size(), 3u) << log_.All();
  EXPECT_TRUE(warnings[0].starts_with("pto cache: the plans records of '" + db_path_ +
                                      "' cannot be read past a damaged block ("))
      << warnings[0];
  EXPECT_TRUE(
      warnings[1].starts_with("pto cache: corrupt data in '" + db_path_ + "' reading plan "))
      << warnings[1];
  EXPECT_TRUE(warnings[2].starts_with("pto cache: dropped the damaged file ")) << warnings[2];
  const int hits = testing::CountIntactRecords(*store, RecordKind::kPlan, kPlans);
  EXPECT_GE(hits, kPlans - kPlans / 8);  // all but one data block's records
  EXPECT_NE(warnings[2].find(absl::StrCat("(", kPlans, " cached records, ", hits,
                                          " of them intact and written again)")),
            std::string::npos)
      << warnings[2];
  EXPECT_EQ(testing::ReadRecord(*store, RecordKind::kPlan, keys.back().second),
            testing::RecordPayload(RecordKind::kPlan, keys.back().second));
  EXPECT_TRUE(store->Scan(RecordKind::kPlan, [](const ScannedRecord&) {}).ok());
  ExpectHealthyAfterRewrite(std::move(store));
}

// A database an older pto wrote (value format 1) is emptied once, with one warning: its values
// are never parsed, lookups are plain misses, and what is stored afterwards persists.
TEST_F(RocksDbStoreTest, DatabaseOfTheOlderValueFormatIsEmptiedOnce) {
  auto older = [](const std::string& payload) {
    proto::Envelope envelope;
    envelope.set_schema_version(1);
    envelope.set_checksum(Checksum64(payload));
    envelope.set_payload(payload);
    return envelope.SerializeAsString();
  };
  { ASSERT_NE(OpenDb(), nullptr); }
  proto::CacheMeta meta;
  meta.set_schema_version(kSchemaVersion);
  meta.set_created_by("pto 0.1");
  RawPut("meta", "schema", older(meta.SerializeAsString()));
  const std::string kernel_key = KernelKey(KernelParts("a"));
  RawPut("kernels", kernel_key, older(MakeKernel("a").SerializeAsString()));
  proto::KernelUsage usage;
  usage.set_size_bytes(600);
  RawPut("meta", "lru/" + kernel_key, older(usage.SerializeAsString()));
  RawPut("tuning", TuningKey(TuningParts("a")), older(MakeTuning("a").SerializeAsString()));
  RawPut("plans", PlanKey(PlanParts("a")), older(MakePlan("a").SerializeAsString()));

  // A read-only base of the older format is refused (left out with a warning by OpenCache).
  CacheOptions base = Options();
  absl::StatusOr<std::unique_ptr<RocksDbStore>> read_only =
      RocksDbStore::Open(base, DbRole::kReadOnly);
  ASSERT_FALSE(read_only.ok());
  EXPECT_EQ(read_only.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(read_only.status().message(), "'" + db_path_ +
                                              "' was written by an older pto in value format 1; "
                                              "this pto reads format 2");

  {
    std::unique_ptr<RocksDbStore> store = OpenDb();
    ASSERT_NE(store, nullptr);
    const std::vector<std::string> warnings = Warnings();
    ASSERT_EQ(warnings.size(), 1u) << log_.All();
    EXPECT_EQ(warnings[0], "pto cache: the cache database at '" + db_path_ +
                               "' was written by an older pto in value format 1, which this pto "
                               "does not read; dropped its records (kernels are compiled and "
                               "stored again as they are needed)");
    EXPECT_EQ(store->stats().entries, 0);
    EXPECT_FALSE(store->GetKernel(KernelParts("a"))->has_value());
    EXPECT_FALSE(store->GetTuning(TuningParts("a"))->has_value());
    EXPECT_FALSE(store->GetPlan(PlanParts("a"))->has_value());
    EXPECT_EQ(store->stats().corrupt, 0);  // plain misses: the records are gone
    ASSERT_TRUE(store->PutKernel(MakeKernel("a")).ok());
  }
  log_.Clear();
  std::unique_ptr<RocksDbStore> store = OpenDb();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(Warnings().empty()) << log_.All();
  auto k = store->GetKernel(KernelParts("a"));
  ASSERT_TRUE(k.ok() && k->has_value()) << k.status();
  EXPECT_EQ((*k)->object(), MakeKernel("a").object());
  EXPECT_EQ(store->stats().entries, 1);
}

TEST_F(RocksDbStoreTest, LruOrderSurvivesReopen) {
  CacheOptions options = Options();
  int64_t now = 1000;
  options.clock_ms = [&now] { return now; };
  int64_t one = 0;
  {
    absl::StatusOr<std::unique_ptr<RocksDbStore>> store = RocksDbStore::Open(options);
    ASSERT_TRUE(store.ok());
    for (const char* name : {"k0", "k1", "k2"}) {
      now += 10;
      ASSERT_TRUE((*store)->PutKernel(MakeKernel(name, 1000)).ok());
    }
    one = (*store)->stats().kernel_bytes / 3;
    now += 10;
    ASSERT_TRUE((*store)->GetKernel(KernelParts("k0"))->has_value());  // k1 is the oldest now
  }
  options.capacity_bytes = 3 * one;
  absl::StatusOr<std::unique_ptr<RocksDbStore>> store = RocksDbStore::Open(options);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->stats().kernel_bytes, 3 * one);
  EXPECT_EQ((*store)->stats().entries, 3);
  now += 10;
  ASSERT_TRUE((*store)->PutKernel(MakeKernel("k3", 1000)).ok());
  EXPECT_FALSE((*store)->GetKernel(KernelParts("k1"))->has_value());
  EXPECT_TRUE((*store)->GetKernel(KernelParts("k0"))->has_value());
  EXPECT_TRUE((*store)->GetKernel(KernelParts("k2"))->has_value());
  EXPECT_TRUE((*store)->GetKernel(KernelParts("k3"))->has_value());
}

}  // namespace
}  // namespace pto::cache
