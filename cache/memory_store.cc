#include "cache/memory_store.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace pto::cache {

MemoryStore::MemoryStore(const CacheOptions& options)
    : CacheStore(options.clock_ms), capacity_bytes_(options.capacity_bytes) {}

MemoryStore::Map& MemoryStore::MapOf(RecordKind kind) {
  switch (kind) {
    case RecordKind::kKernel:
      return kernels_;
    case RecordKind::kPlan:
      return plans_;
    case RecordKind::kTuning:
      break;
  }
  return tuning_;
}

absl::StatusOr<CacheStore::Loaded> MemoryStore::Load(RecordKind kind, const std::string& key) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  Loaded loaded;
  Map& map = MapOf(kind);
  auto it = map.find(key);
  if (it == map.end()) return loaded;
  loaded.state = Loaded::State::kHit;
  loaded.payload = it->second;
  if (kind == RecordKind::kKernel) {
    if (std::optional<LruIndex::Usage> usage = lru_.Touch(key, now)) {
      loaded.last_used_unix_ms = usage->last_used_unix_ms;
      loaded.hits = usage->hits;
    }
  }
  return loaded;
}

absl::Status MemoryStore::Store(RecordKind kind, const std::string& key, std::string payload) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  Map& map = MapOf(kind);
  const int64_t size = static_cast<int64_t>(payload.size());
  if (kind == RecordKind::kKernel && size > capacity_bytes_) {
    // Larger than the whole capacity: not kept (and the others are not flushed for it).
    if (map.erase(key) > 0) lru_.Remove(key);
    ++evictions_;
    return absl::OkStatus();
  }
  auto [it, inserted] = map.try_emplace(key);
  if (kind != RecordKind::kKernel) {
    if (!inserted) other_bytes_ -= static_cast<int64_t>(it->second.size());
    other_bytes_ += size;
  }
  it->second = std::move(payload);
  if (kind == RecordKind::kKernel) {
    lru_.Upsert(key, {size, now, 0});
    for (const std::string& victim : lru_.Victims(capacity_bytes_)) {
      lru_.Remove(victim);
      kernels_.erase(victim);
      ++evictions_;
    }
  }
  return absl::OkStatus();
}

absl::Status MemoryStore::Erase(RecordKind kind, const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  Map& map = MapOf(kind);
  auto it = map.find(key);
  if (it == map.end()) return absl::OkStatus();
  if (kind == RecordKind::kKernel) {
    lru_.Remove(key);
  } else {
    other_bytes_ -= static_cast<int64_t>(it->second.size());
  }
  map.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> MemoryStore::EvictTo(int64_t kernel_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::vector<std::string> victims = lru_.Victims(kernel_bytes);
  for (const std::string& victim : victims) {
    lru_.Remove(victim);
    kernels_.erase(victim);
  }
  evictions_ += static_cast<int64_t>(victims.size());
  return static_cast<int64_t>(victims.size());
}

absl::Status MemoryStore::ScanRaw(RecordKind kind, const std::function<void(ScannedRecord&)>& fn) {
  std::vector<ScannedRecord> records;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, payload] : MapOf(kind)) {
      ScannedRecord& r = records.emplace_back();
      r.kind = kind;
      r.key = key;
      r.stored_bytes = static_cast<int64_t>(payload.size());
      r.payload = payload;
      if (kind == RecordKind::kKernel) {
        if (std::optional<LruIndex::Usage> u = lru_.Find(key)) {
          r.last_used_unix_ms = u->last_used_unix_ms;
          r.hits = u->hits;
        }
      }
    }
  }
  std::sort(records.begin(), records.end(),
            [](const ScannedRecord& a, const ScannedRecord& b) { return a.key < b.key; });
  for (ScannedRecord& r : records) fn(r);  // outside the lock: fn may use the store
  return absl::OkStatus();
}

CacheStore::StoreCounts MemoryStore::Counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  StoreCounts c;
  c.evictions = evictions_;
  c.entries = static_cast<int64_t>(kernels_.size() + plans_.size() + tuning_.size());
  c.kernel_bytes = lru_.total_bytes();
  c.bytes = c.kernel_bytes + other_bytes_;
  return c;
}

}  // namespace pto::cache
