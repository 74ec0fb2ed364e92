// The persistent CacheStore: a RocksDB database with column families "kernels", "plans",
// "tuning" and "meta" (plus RocksDB's "default", unused). Every value is a checksummed
// Envelope (envelope.h). "meta" holds the database's CacheMeta under "schema" and one
// KernelUsage per kernel under "lru/<key>" (size, last use, hits) for LRU eviction.
//
// Durability: writes use the write-ahead log with sync=false. A Put that returned OK
// ("acknowledged") is in the WAL in the operating system's page cache: it survives the
// process being killed (SIGKILL, a crash), not a power loss or kernel crash.
//
// A write that fails (disk full, I/O error, RocksDB stopped by a background error) logs one
// warning and the store degrades: from then on new records are kept in memory (a MemoryStore
// consulted first), reads still come from the database, and persistent() is false.
//
// Corruption found while reading (a RocksDB block checksum failure in an SST file) is a miss;
// the store drops the damaged SST file when RocksDB allows it (DB::DeleteFile: the file is
// bottommost for its key range), losing only cache entries. A database that fails to open
// with a Corruption status (truncated SST, damaged MANIFEST) is repaired once with
// rocksdb::RepairDB (unreadable tables moved to <path>/lost) and reopened, with one warning.
#ifndef PTO_CACHE_ROCKSDB_STORE_H_
#define PTO_CACHE_ROCKSDB_STORE_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "cache/kernel_store.h"
#include "cache/lru_index.h"
#include "cache/memory_store.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
}  // namespace rocksdb

namespace pto::cache {

class RocksDbStore final : public CacheStore {
 public:
  // Opens or creates the database at options.path (which must not be empty). Errors carry
  // RocksDB's message and the path: Unavailable (locked, unwritable, not a directory),
  // DataLoss (corrupt and not repairable), FailedPrecondition (another schema version).
  static absl::StatusOr<std::unique_ptr<RocksDbStore>> Open(const CacheOptions& options);
  ~RocksDbStore() override;

  // False once writes have failed and new records go to memory only.
  bool persistent() const override { return !degraded_.load(); }
  std::string Describe() const override;
  absl::StatusOr<int64_t> EvictTo(int64_t kernel_bytes) override;
  const std::string& path() const { return path_; }

  // Flushes every column family's memtable to SST files (tests; `pto cache` later).
  absl::Status Flush();
  // Compacts every column family fully (after Flush, every value is in an SST file).
  absl::Status CompactAll();
  // Whether Open had to repair the database.
  bool repaired() const { return repaired_; }

 protected:
  absl::StatusOr<Loaded> Load(RecordKind kind, const std::string& key) override;
  absl::Status Store(RecordKind kind, const std::string& key, std::string payload) override;
  absl::Status Erase(RecordKind kind, const std::string& key) override;
  StoreCounts Counts() const override;
  absl::Status ScanRaw(RecordKind kind, const std::function<void(ScannedRecord&)>& fn) override;

 private:
  // Deletes `victims` (kernel records and their usage entries) in one batch. mu_ held.
  absl::Status EvictLocked(const std::vector<std::string>& victims);
  RocksDbStore(const CacheOptions& options);
  absl::Status StoreInDb(RecordKind kind, const std::string& key, const std::string& payload);
  absl::Status CheckSchema();
  // Loads the in-memory LRU index and byte counts. Without `full_scan` kernels come from the
  // persisted usage entries; with it (after a repair or a dropped SST file) from a scan of the
  // kernels family, reconciled with the usage entries. Call with mu_ held.
  absl::Status LoadIndex(bool full_scan);
  void HandleReadCorruption(RecordKind kind, const std::string& key, const std::string& error);
  rocksdb::ColumnFamilyHandle* Family(RecordKind kind) const;
  void Log(int level, const std::string& message) const;
  // After a failed write: one warning, then new records go to `overlay_`.
  void Degrade(const absl::Status& write_error);

  const std::string path_;
  const int64_t capacity_bytes_;
  const std::function<void(int, std::string_view)> log_;
  const std::string created_by_;
  bool repaired_ = false;

  std::unique_ptr<rocksdb::DB> db_;
  // Handles in the order opened; kernels_ etc. point into it.
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::ColumnFamilyHandle* kernels_ = nullptr;
  rocksdb::ColumnFamilyHandle* plans_ = nullptr;
  rocksdb::ColumnFamilyHandle* tuning_ = nullptr;
  rocksdb::ColumnFamilyHandle* meta_ = nullptr;

  mutable std::mutex mu_;  // guards everything below and orders kernel writes with eviction
  LruIndex lru_;
  absl::flat_hash_map<std::string, int64_t> plan_sizes_, tuning_sizes_;
  int64_t evictions_ = 0;

  std::atomic<bool> degraded_{false};
  std::unique_ptr<MemoryStore> overlay_;  // new records once degraded
};

}  // namespace pto::cache

#endif  // PTO_CACHE_ROCKSDB_STORE_H_
