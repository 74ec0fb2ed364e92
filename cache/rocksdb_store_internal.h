// What the files of RocksDbStore (rocksdb_store.cc: records, rocksdb_open.cc: opening,
// rocksdb_roles.cc: writer and reader roles) share: how a RocksDB status becomes an absl one,
// the write options, and the kernel usage entries of the "meta" family. Not for other users.
#ifndef PTO_CACHE_ROCKSDB_STORE_INTERNAL_H_
#define PTO_CACHE_ROCKSDB_STORE_INTERNAL_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "cache/lru_index.h"
#include "rocksdb/options.h"
#include "rocksdb/status.h"

namespace pto::cache {

// `s` as an absl status whose message names `what` and `path`: DataLoss for corruption,
// Unavailable for failures that may pass (I/O, busy, ...), Internal for the rest.
absl::Status FromRocks(const rocksdb::Status& s, std::string_view what, const std::string& path);

// Every write: through the write-ahead log, not synced (see "Durability" in rocksdb_store.h).
rocksdb::WriteOptions WriteOpts();

// The key of a kernel's usage entry in "meta" (kUsagePrefix + the kernel's key).
std::string UsageKey(std::string_view key);
// A usage entry's value: a KernelUsage in the value format (envelope.h).
std::string EncodeUsage(const LruIndex::Usage& u);
// nullopt for a value that fails its checks or does not parse.
std::optional<LruIndex::Usage> DecodeUsage(std::string_view value);

}  // namespace pto::cache

#endif  // PTO_CACHE_ROCKSDB_STORE_INTERNAL_H_
