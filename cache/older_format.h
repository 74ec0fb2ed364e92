// A database written by an older pto in value format 1 (envelope.h), whose values this pto does
// not read: its records are dropped once, by the writer, instead of lingering as misses.
#ifndef PTO_CACHE_OLDER_FORMAT_H_
#define PTO_CACHE_OLDER_FORMAT_H_

#include <vector>

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
class Status;
}  // namespace rocksdb

namespace pto::cache {

// Empties `record_families` and drops the kernel usage entries of `meta`, in one synced write
// (range deletions: nothing is read). The shared counters, plain integers, are kept.
rocksdb::Status DropRecordsOfOlderFormat(
    rocksdb::DB& db, const std::vector<rocksdb::ColumnFamilyHandle*>& record_families,
    rocksdb::ColumnFamilyHandle* meta);

}  // namespace pto::cache

#endif  // PTO_CACHE_OLDER_FORMAT_H_
