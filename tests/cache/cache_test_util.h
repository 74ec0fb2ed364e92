// Helpers for the cache tests: temporary directories, records, a log capture, and raw file
// access for corrupting databases on disk.
#ifndef PTO_TESTS_CACHE_CACHE_TEST_UTIL_H_
#define PTO_TESTS_CACHE_CACHE_TEST_UTIL_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_key.h"
#include "cache/cache_store.h"
#include "proto/cache.pb.h"

namespace pto::cache::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction
// (permissions are restored first, so a test may chmod what it made).
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string Sub(std::string_view name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// `n` pseudo-random bytes (incompressible, so they appear verbatim in SST files).
std::string RandomBytes(size_t n, uint32_t seed);

// A kernel record whose object is `object_size` random bytes seeded from `name`.
proto::KernelRecord MakeKernel(const std::string& name, size_t object_size = 512);
KernelKeyParts KernelParts(const std::string& name);
proto::TuningRecord MakeTuning(const std::string& name, size_t config_size = 64);
TuningKeyParts TuningParts(const std::string& name);
proto::PlanRecord MakePlan(const std::string& name);
PlanKeyParts PlanParts(const std::string& name);

// The record without the fields the store fills in on Get (usage), for comparisons.
proto::KernelRecord WithoutUsage(proto::KernelRecord record);
bool SameMessage(const google::protobuf::Message& a, const google::protobuf::Message& b);

// Collects everything a store logs.
class LogCapture {
 public:
  std::function<void(int, std::string_view)> Sink();
  std::vector<std::string> AtLeast(int level) const;
  std::string All() const;
  void Clear();

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<int, std::string>> messages_;
};

// OpenCache on `path` (over the base `base`, if not empty), logging to `log`, with the
// background chores left to the test (SharedStore::Maintain). Null, failing the test, if
// OpenCache fails.
std::unique_ptr<CacheStore> OpenWithoutMaintenance(const std::string& path, const std::string& base,
                                                   LogCapture& log);

std::vector<std::filesystem::path> FilesMatching(const std::filesystem::path& dir,
                                                 std::string_view prefix, std::string_view suffix);
std::string ReadFile(const std::filesystem::path& file);
void WriteFile(const std::filesystem::path& file, std::string_view bytes);
// Writes `value` under `key` in column family `family` of the database at `db_path` with
// RocksDB directly (no pto store may have it open): for values a store would never write.
void RawPut(const std::string& db_path, const std::string& family, const std::string& key,
            const std::string& value);

// The largest live SST file of column family `family` of the (closed) database at `db_path`,
// or an empty path. Its data blocks come first, so bytes early in it are record data.
std::filesystem::path LargestSstOf(const std::string& db_path, const std::string& family);

// The SST file in `dir` that contains `needle`, or an empty path.
std::filesystem::path SstContaining(const std::filesystem::path& dir, std::string_view needle);

// The records of a family full enough for its SST file to hold many data blocks: record `i` of
// `kind` is named "<kind name>-<i>" and carries random bytes (a kernel's object, a tuning
// config, lowercase hex kernel keys for a plan), which appear verbatim in SST files.
std::string RecordName(RecordKind kind, int i);
std::string RecordPayload(RecordKind kind, int i);  // the serialized record
// Bytes of record `i` that no other record has: where to find it in an SST file.
std::string RecordNeedle(RecordKind kind, int i);
// Stores records 0..count-1 of `kind` through a writer store at `db_path`, then flushes and
// compacts, so that every value is in an SST file, and closes the store.
void FillFamilyAndCompact(const std::string& db_path, RecordKind kind, int count);
// Flips a byte inside `needle` in the SST file of `dir` that holds it, so that the data block
// holding it fails its checksum. Returns the file, or an empty path if no file holds it.
std::filesystem::path DamageSstAt(const std::filesystem::path& dir, std::string_view needle);
// Reads record `i` of `kind` from `store`: its serialized payload, or "" for a miss.
std::string ReadRecord(CacheStore& store, RecordKind kind, int i);
// Reads records 0..count-1 of `kind`, expects every hit to be the record stored, and returns
// how many were hits.
int CountIntactRecords(CacheStore& store, RecordKind kind, int count);

}  // namespace pto::cache::testing

#endif  // PTO_TESTS_CACHE_CACHE_TEST_UTIL_H_
