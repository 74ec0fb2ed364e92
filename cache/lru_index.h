// Sizes and last-use times of kernel records, ordered for least-recently-used eviction.
// Not thread-safe: the stores call it under their own mutex.
#ifndef PTO_CACHE_LRU_INDEX_H_
#define PTO_CACHE_LRU_INDEX_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace pto::cache {

class LruIndex {
 public:
  struct Usage {
    int64_t size_bytes = 0;
    int64_t last_used_unix_ms = 0;
    int64_t hits = 0;
  };

  // Adds or replaces `key`, as the most recently used entry among those used at the same ms.
  void Upsert(const std::string& key, const Usage& usage);
  // Records a hit at `now_ms` (never moves last_used backwards). nullopt if absent.
  std::optional<Usage> Touch(const std::string& key, int64_t now_ms);
  void Remove(const std::string& key);
  // Every key, in no particular order.
  std::vector<std::string> Keys() const;
  std::optional<Usage> Find(const std::string& key) const;

  // Keys to evict, least recently used first, until total_bytes() <= capacity_bytes.
  std::vector<std::string> Victims(int64_t capacity_bytes) const;

  int64_t total_bytes() const { return total_bytes_; }
  int64_t size() const { return static_cast<int64_t>(entries_.size()); }
  void Clear();

 private:
  struct Entry {
    Usage usage;
    uint64_t tick = 0;  // breaks ties between entries used in the same millisecond
  };
  using OrderKey = std::tuple<int64_t, uint64_t, std::string>;

  absl::flat_hash_map<std::string, Entry> entries_;
  std::set<OrderKey> order_;
  uint64_t next_tick_ = 0;
  int64_t total_bytes_ = 0;
};

}  // namespace pto::cache

#endif  // PTO_CACHE_LRU_INDEX_H_
