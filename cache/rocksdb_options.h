// The RocksDB options and column family names of a cache database, shared by the store
// (rocksdb_store.h) and the tools that open a database on their own (rebuild_families.h).
#ifndef PTO_CACHE_ROCKSDB_OPTIONS_H_
#define PTO_CACHE_ROCKSDB_OPTIONS_H_

#include <string>
#include <string_view>

#include "rocksdb/options.h"

namespace pto::cache {

inline constexpr char kKernelsFamily[] = "kernels";
inline constexpr char kPlansFamily[] = "plans";
inline constexpr char kTuningFamily[] = "tuning";
inline constexpr char kMetaFamily[] = "meta";
// Kernel usage entries in "meta": kUsagePrefix + the kernel's key.
inline constexpr char kUsagePrefix[] = "lru/";

// The prefix of the keys of a family's records ("k-", "p-", "t-": cache_key.h), and for
// "meta" that of its usage entries ("lru/k-"): each followed by 32 lowercase hex digits.
std::string KeyPrefixOf(std::string_view family);

// A writer's options: creates what is missing, paranoid checks, a quiet info log.
rocksdb::DBOptions DbOptions();
// Options of the column family `name`: the counters' merge operator for "meta", the best
// compression the library has.
rocksdb::ColumnFamilyOptions FamilyOptions(const std::string& name);

}  // namespace pto::cache

#endif  // PTO_CACHE_ROCKSDB_OPTIONS_H_
