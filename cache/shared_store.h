// The store OpenCache returns for a path: a RocksDB database that several processes share
// (docs/cache.md, "Several processes"), optionally over a read-only base layer.
//
// The first process to open the path becomes the writer (it holds RocksDB's LOCK); every other
// one becomes a reader (a RocksDB secondary instance that hands its writes to the writer
// through the inbox). RocksDbStore::OpenWriterOrReader chooses (rocksdb_roles.cc). A
// background thread does each role's chores every CacheOptions::maintenance_interval_ms: the
// writer ingests the inbox; a reader tries to take the writer role over (it succeeds once the
// writer has exited, cleanly or not), otherwise catches up and hands over its usage updates;
// both add their counters to the shared ones.
//
// Before anything is opened, each directory is checked (trust.h): one another user could
// change is refused, or with UnsafeDirectory::kReadDataOnly opened read-only for its data; code
// is trusted only when no other user could have changed its files (code_trusted()).
#ifndef PTO_CACHE_SHARED_STORE_H_
#define PTO_CACHE_SHARED_STORE_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "cache/cache_store.h"
#include "cache/rocksdb_store.h"

namespace pto::cache {

class SharedStore final : public CacheStore {
 public:
  // Opens options.path as writer or reader, and options.base_path (if set) read-only. Errors
  // as RocksDbStore::Open's for the path, and FailedPrecondition with the reason for a
  // directory CheckCacheDirectory refuses (one another user could change, with kRefuse; one
  // with a link in it); a base that cannot be opened or is refused is left out with a
  // warning, and a base another user could change gives data but no code.
  static absl::StatusOr<std::unique_ptr<SharedStore>> Open(
      const CacheOptions& options, UnsafeDirectory unsafe = UnsafeDirectory::kRefuse);
  ~SharedStore() override;

  bool persistent() const override;
  std::string Describe() const override;
  std::string Role() const override;
  bool code_trusted() const override { return why_code_untrusted_.empty(); }
  std::string WhyCodeUntrusted() const override { return why_code_untrusted_; }
  absl::StatusOr<int64_t> EvictTo(int64_t kernel_bytes) override;
  CacheStats TotalStats() override;

  // One round of the background chores, now (for tests).
  void Maintain();

 protected:
  absl::StatusOr<Loaded> Load(RecordKind kind, const std::string& key) override;
  absl::Status Store(RecordKind kind, const std::string& key, std::string payload) override;
  absl::Status Erase(RecordKind kind, const std::string& key) override;
  StoreCounts Counts() const override;
  absl::Status ScanRaw(RecordKind kind, const std::function<void(ScannedRecord&)>& fn) override;

 private:
  SharedStore(const CacheOptions& options, std::unique_ptr<RocksDbStore> db,
              std::unique_ptr<RocksDbStore> base, std::string why_code_untrusted);
  void MaintenanceLoop();
  // Adds this process's counts since the last call to the shared counters.
  void FlushCounters();

  const CacheOptions options_;
  const std::string why_code_untrusted_;  // empty: trusted
  std::unique_ptr<RocksDbStore> base_;    // read-only; may be null

  mutable std::shared_mutex role_mu_;  // exclusive only to swap db_ when taking over
  std::unique_ptr<RocksDbStore> db_;

  std::mutex counters_mu_;
  CacheStats flushed_;  // the part of stats() already added to the shared counters

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread maintenance_;
};

}  // namespace pto::cache

#endif  // PTO_CACHE_SHARED_STORE_H_
