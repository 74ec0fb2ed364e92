#include "cache/lru_index.h"

#include <algorithm>

namespace pto::cache {

void LruIndex::Upsert(const std::string& key, const Usage& usage) {
  Remove(key);
  Entry entry{usage, next_tick_++};
  order_.emplace(usage.last_used_unix_ms, entry.tick, key);
  total_bytes_ += usage.size_bytes;
  entries_.emplace(key, entry);
}

std::optional<LruIndex::Usage> LruIndex::Touch(const std::string& key, int64_t now_ms) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  Entry& entry = it->second;
  order_.erase(OrderKey(entry.usage.last_used_unix_ms, entry.tick, key));
  entry.usage.last_used_unix_ms = std::max(entry.usage.last_used_unix_ms, now_ms);
  entry.usage.hits += 1;
  entry.tick = next_tick_++;
  order_.emplace(entry.usage.last_used_unix_ms, entry.tick, key);
  return entry.usage;
}

void LruIndex::Remove(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  order_.erase(OrderKey(it->second.usage.last_used_unix_ms, it->second.tick, key));
  total_bytes_ -= it->second.usage.size_bytes;
  entries_.erase(it);
}

std::optional<LruIndex::Usage> LruIndex::Find(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.usage;
}

std::vector<std::string> LruIndex::Victims(int64_t capacity_bytes) const {
  std::vector<std::string> victims;
  int64_t total = total_bytes_;
  for (auto it = order_.begin(); it != order_.end() && total > capacity_bytes; ++it) {
    const std::string& key = std::get<2>(*it);
    total -= entries_.at(key).usage.size_bytes;
    victims.push_back(key);
  }
  return victims;
}

std::vector<std::string> LruIndex::Keys() const {
  std::vector<std::string> keys;
  keys.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) keys.push_back(key);
  return keys;
}

void LruIndex::Clear() {
  entries_.clear();
  order_.clear();
  total_bytes_ = 0;
}

}  // namespace pto::cache
