// The persistent CacheStore: a RocksDB database with column families "kernels", "plans",
// "tuning" and "meta" (plus RocksDB's "default", unused). Every value is in the checksummed
// value format (envelope.h). "meta" holds the database's CacheMeta under "schema", one
// KernelUsage per kernel under "lru/<key>" (size, last use, hits) for LRU eviction, and the
// counters every process adds to under "count/<name>" (add_operator.h).
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
// bottommost for its key range), after writing again the file's records that can still be
// read (readable_records.h). A database that fails to open with a Corruption status (truncated
// SST, damaged MANIFEST) or whose MANIFEST is missing (open_recovery.h) is repaired once with
// rocksdb::RepairDB (unreadable tables moved to <path>/lost) and reopened, with one warning.
//
// Roles (several processes on one path, docs/cache.md): the writer holds RocksDB's LOCK and
// does every write to the database; a reader opens it as a RocksDB secondary instance, catches
// up with the writer when a lookup misses, and hands its own writes (records, deletions, usage
// updates, counters) to the writer through the inbox (inbox.h), keeping them in memory until
// the writer has ingested them. A read-only store (a shipped base layer) only reads.
// OpenWriterOrReader chooses the role.
//
// The class is implemented in three files: rocksdb_open.cc (opening), rocksdb_roles.cc
// (choosing a role, registering it, and each role's own work) and rocksdb_store.cc (records).
#ifndef PTO_CACHE_ROCKSDB_STORE_H_
#define PTO_CACHE_ROCKSDB_STORE_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "cache/cache_store.h"
#include "cache/inbox.h"
#include "cache/lru_index.h"
#include "cache/memory_store.h"

namespace rocksdb {
class ColumnFamilyHandle;
struct ColumnFamilyDescriptor;
class DB;
struct DBOptions;
struct LiveFileMetaData;
struct Options;
struct ReadOptions;
class Status;
class WriteBatch;
}  // namespace rocksdb

namespace pto::cache {

enum class DbRole { kWriter, kReader, kReadOnly };

class RocksDbStore final : public CacheStore {
 public:
  // Opens the database at options.path (which must not be empty); the writer creates it if
  // missing. Errors carry RocksDB's message and the path: Unavailable (locked, unwritable, not
  // a directory, missing), DataLoss (corrupt and not repairable), FailedPrecondition (another
  // schema version, or not a pto cache).
  static absl::StatusOr<std::unique_ptr<RocksDbStore>> Open(const CacheOptions& options,
                                                            DbRole role = DbRole::kWriter);
  // Opens options.path as the writer if no process holds that role, else as a reader. A
  // reader open that fails (the writer may not have created the database yet) is retried, 40
  // attempts 50 ms apart. Errors as Open's.
  static absl::StatusOr<std::unique_ptr<RocksDbStore>> OpenWriterOrReader(
      const CacheOptions& options);
  // A reader's way to the writer role once the writer has exited (cleanly or not): the writer
  // store of options.path, or null while another store holds the role or if it cannot open.
  static std::unique_ptr<RocksDbStore> TakeOverWriterRole(const CacheOptions& options);
  ~RocksDbStore() override;

  DbRole role() const { return role_; }
  std::string Role() const override;
  absl::StatusOr<int64_t> EvictTo(int64_t kernel_bytes) override;

  // One round of this role's chores: the writer ingests the inbox and removes the directories
  // of readers that no longer run; a reader catches up and hands over its usage updates.
  void DoRoleChores();
  // Writer: ingests the inbox's complete batches, oldest first, then refreshes its index and
  // evicts past the capacity. Returns how many batches were ingested.
  absl::StatusOr<int> IngestInbox();
  // Reader: catches up with the writer (new records, ingested batches) and refreshes sizes.
  absl::Status CatchUp();
  // Reader: hands the usage updates of its hits to the writer (one inbox batch).
  absl::Status FlushPendingUsage();
  // Adds `delta`'s hits, misses, corrupt, puts and kernel_puts to the counters every process
  // shares.
  absl::Status AddCounters(const CacheStats& delta);
  // The shared counters (hits, misses, corrupt, puts, kernel_puts; the rest zero).
  absl::StatusOr<CacheStats> ReadCounters();

  // False once writes have failed and new records go to memory only.
  bool persistent() const override { return !degraded_.load(); }
  std::string Describe() const override;
  const std::string& path() const { return path_; }

  // Flushes every column family's memtable to SST files (writer only).
  absl::Status Flush();
  // Compacts every column family fully (after Flush, every value is in an SST file; writer
  // only).
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
  RocksDbStore(const CacheOptions& options, DbRole role);

  // Opening (rocksdb_open.cc).
  // The database in role_, repaired once if it is damaged, its column families bound.
  absl::Status OpenDatabase();
  // DB::Open, OpenAsSecondary (after MakeReaderDir) or OpenForReadOnly, as role_ says.
  rocksdb::Status OpenInRole(const rocksdb::DBOptions& db_options,
                             const std::vector<rocksdb::ColumnFamilyDescriptor>& families);
  // Writer, after `damage` that RepairDB fixes: repairs, lists the families again, reopens.
  absl::Status RepairAndReopen(const rocksdb::DBOptions& db_options, const rocksdb::Status& damage,
                               std::vector<rocksdb::ColumnFamilyDescriptor>* families);
  // Sets kernels_, plans_, tuning_ and meta_ from the handles opened for `families`.
  absl::Status BindFamilies(const std::vector<rocksdb::ColumnFamilyDescriptor>& families);
  // Checks the meta record's schema version; the writer writes the record when it is missing
  // or unreadable, and drops the records of a database in value format 1.
  absl::Status CheckSchema();
  absl::Status WriteSchemaRecord();
  // Loads the in-memory LRU index and byte counts. Without `full_scan` kernels come from the
  // persisted usage entries; with it (after a repair or a dropped SST file) from a scan of the
  // kernels family, reconciled with the usage entries. Call with mu_ held.
  absl::Status LoadIndex(bool full_scan);
  // The persisted usage of kernels; entries that do not decode are deleted through `fixes`.
  absl::flat_hash_map<std::string, LruIndex::Usage> ReadUsageEntries(rocksdb::WriteBatch* fixes);
  // Indexes the kernels really present, with their usage where it has one; `fixes` drops the
  // usage of absent kernels and writes usage that is missing or has the wrong size.
  void ReconcileUsageWithKernels(const absl::flat_hash_map<std::string, LruIndex::Usage>& usage,
                                 int64_t now, rocksdb::WriteBatch* fixes);
  // Plans and tuning records are small: counts them directly (notes damage in index_damage_).
  void CountSmallRecords();

  // Roles (rocksdb_roles.cc).
  // Writer: enters path_ in this process's registry of writers, before RocksDB takes the LOCK.
  absl::Status ClaimWriterRole();
  // Reader: makes its directory under readers/ (secondary_path_).
  absl::Status MakeReaderDir();
  // Undoes ClaimWriterRole and MakeReaderDir, once the database is closed.
  void ReleaseRole();
  // Writer, once open: removes the inbox's abandoned temporaries and ingests the inbox.
  void StartWriterRole();
  // Writer: sets aside the inbox batches it may not ingest, with warnings.
  void SetAsideRefusedBatches();
  // Reader: TryCatchUpWithPrimary only. A lookup needs no more; CatchUp also refreshes the
  // index (sizes, usage), which scans the small records and is kept off the lookup path.
  absl::Status TryCatchUp();
  // Reader: writes `batch` to the inbox. Write failures degrade the store.
  absl::Status HandOver(const inbox::Batch& batch);

  // Records (rocksdb_store.cc).
  // Deletes `victims` (kernel records and their usage entries): in one batch for the writer,
  // through the inbox for a reader. mu_ held.
  absl::Status EvictLocked(const std::vector<std::string>& victims);
  absl::Status StoreInDb(RecordKind kind, const std::string& key, const std::string& payload);
  // Reader, after a miss: looks again once caught up with the writer, then in the inbox.
  rocksdb::Status LookAgainAsReader(RecordKind kind, const std::string& key,
                                    const rocksdb::ReadOptions& read, std::string* value);
  // Updates the usage of a kernel just read (`stored_bytes` its stored size) and `loaded`'s
  // copy of it; the writer persists it, a reader keeps it for FlushPendingUsage.
  void RecordKernelHit(const std::string& key, int64_t stored_bytes, Loaded* loaded);
  // After a read found corruption: the writer drops the damaged SST files.
  void HandleReadCorruption(RecordKind kind, const std::string& key, const std::string& error);
  // Writes the readable records of `f` again and drops it; whether it was dropped.
  bool DropDamagedFile(const rocksdb::LiveFileMetaData& f);
  // Adds to `salvage` the records of `f` that can still be read.
  void CollectReadableRecords(const rocksdb::LiveFileMetaData& f, rocksdb::WriteBatch* salvage);
  rocksdb::ColumnFamilyHandle* Family(RecordKind kind) const;
  void Log(int level, const std::string& message) const;
  // After a failed write: one warning, then new records go to `overlay_`.
  void Degrade(const absl::Status& write_error);

  const DbRole role_;
  const std::string path_;
  std::string secondary_path_;  // reader: where its secondary instance keeps its info log
  std::unique_ptr<rocksdb::Options> table_options_;  // for inbox files
  const int64_t capacity_bytes_;
  const std::function<void(int, std::string_view)> log_;
  const std::string created_by_;
  bool repaired_ = false;
  bool registered_writer_ = false;  // in this process's registry of writers

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
  std::string index_damage_;  // why LoadIndex could not read every plan or tuning record
  int64_t evictions_ = 0;

  // Reader: usage of kernels hit since the last FlushPendingUsage; keys this process deleted
  // whose deletion the writer may not have ingested yet.
  absl::flat_hash_map<std::string, LruIndex::Usage> pending_usage_;
  absl::flat_hash_set<std::string> erased_;
  std::mutex catch_up_mu_;

  // Writer: why the inbox was last refused (warned about once), or empty.
  std::string inbox_refusal_;

  std::atomic<bool> degraded_{false};
  // The writer's new records once degraded; a reader's own records until the writer has them.
  std::unique_ptr<MemoryStore> overlay_;
};

}  // namespace pto::cache

#endif  // PTO_CACHE_ROCKSDB_STORE_H_
