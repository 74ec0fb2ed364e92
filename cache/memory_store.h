// The in-memory CacheStore: records held as serialized payloads, kernels evicted least
// recently used first past CacheOptions::capacity_bytes. Thread-safe. Also the fallback when a
// database cannot be opened.
#ifndef PTO_CACHE_MEMORY_STORE_H_
#define PTO_CACHE_MEMORY_STORE_H_

#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "cache/cache_store.h"
#include "cache/lru_index.h"

namespace pto::cache {

class MemoryStore final : public CacheStore {
 public:
  // Uses capacity_bytes and clock_ms; the path is ignored.
  explicit MemoryStore(const CacheOptions& options);

  bool persistent() const override { return false; }
  std::string Describe() const override { return "memory"; }
  absl::StatusOr<int64_t> EvictTo(int64_t kernel_bytes) override;

 protected:
  absl::StatusOr<Loaded> Load(RecordKind kind, const std::string& key) override;
  absl::Status Store(RecordKind kind, const std::string& key, std::string payload) override;
  absl::Status Erase(RecordKind kind, const std::string& key) override;
  StoreCounts Counts() const override;
  absl::Status ScanRaw(RecordKind kind, const std::function<void(ScannedRecord&)>& fn) override;

 private:
  // Keeps records here: a reader's own until the writer has them, all new ones once its
  // database stops taking writes.
  friend class RocksDbStore;
  using Map = absl::flat_hash_map<std::string, std::string>;
  Map& MapOf(RecordKind kind);

  const int64_t capacity_bytes_;
  mutable std::mutex mu_;
  Map kernels_, plans_, tuning_;
  LruIndex lru_;
  int64_t other_bytes_ = 0;  // plans and tuning
  int64_t evictions_ = 0;
};

}  // namespace pto::cache

#endif  // PTO_CACHE_MEMORY_STORE_H_
