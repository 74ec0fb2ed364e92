// The kernel cache's store: kernel, plan and tuning records (proto/cache.proto) under keys from
// cache_key.h. One interface, one file per implementation (memory_store.h, rocksdb_store.h,
// shared_store.h), and a factory, OpenCache, that never leaves the embedder without a cache: a database that
// cannot be used degrades to memory-only with one warning.
//
// Integrity: a hit is a record that parses, has this schema version, and whose key parts equal
// the ones asked for (so even a hash collision cannot be a wrong hit). Anything else found
// under a key (a bad checksum, a truncated value, an unknown schema version, a RocksDB block
// that fails its checksum) is a miss, counted in `corrupt`, and the value is deleted so the
// next Put rewrites it.
#ifndef PTO_CACHE_CACHE_STORE_H_
#define PTO_CACHE_CACHE_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cache/cache_key.h"
#include "proto/cache.pb.h"

namespace pto::cache {

// The version of the record formats and of the database layout. A record of another version
// is a miss; a database whose meta says another version is not opened (memory-only instead).
inline constexpr uint32_t kSchemaVersion = 1;

// Levels passed to CacheOptions::log, numbered as pto::LogLevel.
enum CacheLogLevel : int { kLogDebug = 0, kLogInfo = 1, kLogWarning = 2, kLogError = 3 };

struct CacheOptions {
  // Directory of the RocksDB database, created if missing. Empty: memory only.
  std::string path;
  // Kernel records are evicted, least recently used first, while their stored bytes exceed
  // this. Plan and tuning records are never evicted. Must be positive.
  int64_t capacity_bytes = int64_t{1} << 30;
  // Receives warnings (e.g. the fallback to memory-only) and notes; may be empty.
  std::function<void(int level, std::string_view message)> log;
  // Milliseconds since the Unix epoch, for created/last-used times. Empty: the system clock.
  std::function<int64_t()> clock_ms;
  // Written into a new database's meta record.
  std::string created_by = "pto";
  // A read-only database (e.g. baked into an image) layered under `path`: lookups that miss
  // in `path` look here, writes go to `path` only. Empty: none.
  std::string base_path;
  // How often (ms) a process that shares `path` with others checks for work: the writer
  // ingests records other processes left in the inbox, a reader tries to take the writer role
  // over and catches up with the writer, and both persist their counters.
  int maintenance_interval_ms = 200;
};

// One record as Scan sees it, checked as a Get would check it.
struct ScannedRecord {
  RecordKind kind = RecordKind::kKernel;
  std::string key;
  int64_t stored_bytes = 0;  // bytes of the stored value
  // Empty when the record is sound; otherwise why a Get would treat it as a miss.
  std::string problem;
  std::string payload;  // the serialized record (KernelRecord, PlanRecord, TuningRecord)
  // Kernels: the store's usage index.
  int64_t last_used_unix_ms = 0;
  int64_t hits = 0;
  bool from_base = false;  // found in the read-only base layer
};

struct CacheStats {
  int64_t hits = 0;
  int64_t misses = 0;   // including corrupt values
  int64_t corrupt = 0;  // values found but unusable (checksum, truncation, schema, key)
  int64_t puts = 0;
  int64_t kernel_puts = 0;  // kernel records written: compiles (and imports)
  int64_t evictions = 0;
  int64_t entries = 0;       // records of all kinds now stored
  int64_t bytes = 0;         // their stored bytes
  int64_t kernel_bytes = 0;  // the part capacity_bytes bounds
};

class CacheStore {
 public:
  virtual ~CacheStore() = default;
  CacheStore(const CacheStore&) = delete;
  CacheStore& operator=(const CacheStore&) = delete;

  // nullopt is a miss. An error status means the store itself failed (e.g. an I/O error that
  // is not corruption); callers treat it as a miss too.
  absl::StatusOr<std::optional<proto::KernelRecord>> GetKernel(const KernelKeyParts& parts);
  absl::StatusOr<std::optional<proto::PlanRecord>> GetPlan(const PlanKeyParts& parts);
  absl::StatusOr<std::optional<proto::TuningRecord>> GetTuning(const TuningKeyParts& parts);

  // The key is computed from the record's own key fields; an existing record is replaced.
  // schema_version is set to kSchemaVersion; a kernel's created_unix_ms is set if 0.
  // InvalidArgument for a record missing its required fields.
  absl::Status PutKernel(const proto::KernelRecord& record);
  absl::Status PutPlan(const proto::PlanRecord& record);
  absl::Status PutTuning(const proto::TuningRecord& record);

  // This process's counts (and the store's sizes).
  CacheStats stats() const;
  // Counts of every process that has used the database, this one included (hits, misses,
  // corrupt and puts persisted as they happen), with the store's sizes. A memory store
  // returns stats().
  virtual CacheStats TotalStats();

  // Calls `fn` for every record of `kind` in key order (the writable layer, then base
  // records it does not shadow). Records that fail the checks a Get makes are reported with
  // `problem` set and left alone. An error means the scan itself stopped.
  absl::Status Scan(RecordKind kind, const std::function<void(const ScannedRecord&)>& fn);
  // Deletes the record under `key` (no error if there is none). Never touches the base.
  absl::Status Remove(RecordKind kind, const std::string& key);
  // Evicts least-recently-used kernels until their bytes are at most `kernel_bytes`; returns
  // how many were evicted. Plan and tuning records are kept.
  virtual absl::StatusOr<int64_t> EvictTo(int64_t kernel_bytes) = 0;
  // Whether object code read from this store may be loaded and run, and if not, why (docs/
  // cache.md, "Directories and files"). False when another user could have changed the files
  // of its database or base (a warning is logged once at open): its kernel records are still
  // written and listed, but the runtime compiles instead of loading, and merge and export
  // take no code from it.
  virtual bool code_trusted() const { return true; }
  virtual std::string WhyCodeUntrusted() const { return ""; }
  // "memory", "writer" (holds the database), "reader" (another process is the writer) or
  // "read-only" (a directory opened for its data only).
  virtual std::string Role() const { return "memory"; }

  // Whether records survive the process (false for MemoryStore, including the fallback).
  virtual bool persistent() const = 0;
  // "memory", or "rocksdb:<path> (<role>)" with what else applies (a base layer, failed
  // writes).
  virtual std::string Describe() const = 0;

 protected:
  explicit CacheStore(std::function<int64_t()> clock_ms);

  struct Loaded {
    enum class State { kMiss, kHit, kCorrupt } state = State::kMiss;
    std::string payload;  // the serialized record, for kHit
    // Kernels only: the usage after this hit (the store updates it).
    int64_t last_used_unix_ms = 0;
    int64_t hits = 0;
  };
  struct StoreCounts {
    int64_t evictions = 0, entries = 0, bytes = 0, kernel_bytes = 0;
  };

  // The payload stored under `key`, or why there is none. Only failures of the store itself
  // (not corruption) are errors.
  virtual absl::StatusOr<Loaded> Load(RecordKind kind, const std::string& key) = 0;
  virtual absl::Status Store(RecordKind kind, const std::string& key, std::string payload) = 0;
  virtual absl::Status Erase(RecordKind kind, const std::string& key) = 0;
  virtual StoreCounts Counts() const = 0;
  // Every stored value of `kind` in key order, unchecked: `problem` set only for what the
  // store itself knows (a RocksDB corruption), `payload` the raw stored payload.
  virtual absl::Status ScanRaw(RecordKind kind, const std::function<void(ScannedRecord&)>& fn) = 0;

  // For stores that wrap others (layers, roles): the protected calls of another store.
  static absl::StatusOr<Loaded> LoadFrom(CacheStore& s, RecordKind kind, const std::string& key) {
    return s.Load(kind, key);
  }
  static absl::Status StoreIn(CacheStore& s, RecordKind kind, const std::string& key,
                              std::string payload) {
    return s.Store(kind, key, std::move(payload));
  }
  static absl::Status EraseFrom(CacheStore& s, RecordKind kind, const std::string& key) {
    return s.Erase(kind, key);
  }
  static StoreCounts CountsOf(const CacheStore& s) { return s.Counts(); }
  static absl::Status ScanRawOf(CacheStore& s, RecordKind kind,
                                const std::function<void(ScannedRecord&)>& fn) {
    return s.ScanRaw(kind, fn);
  }

  int64_t NowMs() const;

 private:
  template <typename Record, typename Parts>
  absl::StatusOr<std::optional<Record>> GetRecord(RecordKind kind, const Parts& parts,
                                                  const std::string& key);
  template <typename Record>
  absl::Status PutRecord(RecordKind kind, const Record& record, const std::string& key);

  std::function<int64_t()> clock_ms_;
  std::atomic<int64_t> hits_{0}, misses_{0}, corrupt_{0}, puts_{0}, kernel_puts_{0};
};

// The factory. A RocksDB database at options.path, or a MemoryStore when the path is empty or
// the database cannot be used at all (locked by another process, read-only or missing
// directory, path is a file, corrupt beyond repair, another schema version): then
// options.log receives exactly one kLogWarning naming the path and RocksDB's error. Only
// invalid options are an error (InvalidArgument).
absl::StatusOr<std::unique_ptr<CacheStore>> OpenCache(const CacheOptions& options);

// What OpenPersistentCache does with a directory other users could change (trust.h).
enum class UnsafeDirectory {
  kRefuse,        // an error (FailedPrecondition with the reason), as for the runtime
  kReadDataOnly,  // opened read-only: nothing in it is written, code_trusted() is false
};

// The database at options.path (not empty), as OpenCache opens it, except that a database
// that cannot be used is an error instead of a memory-only stand-in: for tools that must not
// report on an empty cache.
absl::StatusOr<std::unique_ptr<CacheStore>> OpenPersistentCache(const CacheOptions& options,
                                                                UnsafeDirectory unsafe);

}  // namespace pto::cache

#endif  // PTO_CACHE_CACHE_STORE_H_
