#include "cache/older_format.h"

#include <string>

#include "cache/rocksdb_options.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"

namespace pto::cache {

rocksdb::Status DropRecordsOfOlderFormat(
    rocksdb::DB& db, const std::vector<rocksdb::ColumnFamilyHandle*>& record_families,
    rocksdb::ColumnFamilyHandle* meta) {
  rocksdb::WriteBatch batch;
  // Record keys are "k-", "p-" or "t-" and 32 hex digits: all below "\xff".
  for (rocksdb::ColumnFamilyHandle* family : record_families) {
    rocksdb::Status s = batch.DeleteRange(family, "", "\xff");
    if (!s.ok()) return s;
  }
  std::string usage_end = kUsagePrefix;
  usage_end.back() += 1;  // "lru0": just above every "lru/..." key
  rocksdb::Status s = batch.DeleteRange(meta, kUsagePrefix, usage_end);
  if (!s.ok()) return s;
  rocksdb::WriteOptions sync;
  sync.sync = true;
  return db.Write(sync, &batch);
}

}  // namespace pto::cache
