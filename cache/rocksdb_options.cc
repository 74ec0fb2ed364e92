#include "cache/rocksdb_options.h"

#include <algorithm>
#include <vector>

#include "cache/add_operator.h"
#include "rocksdb/convenience.h"

namespace pto::cache {

std::string KeyPrefixOf(std::string_view family) {
  if (family == kKernelsFamily) return "k-";
  if (family == kPlansFamily) return "p-";
  if (family == kTuningFamily) return "t-";
  return std::string(kUsagePrefix) + "k-";
}

rocksdb::DBOptions DbOptions() {
  rocksdb::DBOptions o;
  o.create_if_missing = true;
  o.create_missing_column_families = true;
  o.paranoid_checks = true;  // the default; stated because the fallback logic relies on it
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  o.keep_log_file_num = 2;
  return o;
}

rocksdb::ColumnFamilyOptions FamilyOptions(const std::string& name) {
  rocksdb::ColumnFamilyOptions o;
  if (name == kMetaFamily) o.merge_operator = NewAddInt64Operator();  // counters
  const std::vector<rocksdb::CompressionType> supported = rocksdb::GetSupportedCompressions();
  auto has = [&](rocksdb::CompressionType t) {
    return std::find(supported.begin(), supported.end(), t) != supported.end();
  };
  // Object code compresses about 2x; LZ4 decompresses fast enough for the warm-load budget.
  if (has(rocksdb::kLZ4Compression)) {
    o.compression = rocksdb::kLZ4Compression;
  } else if (has(rocksdb::kSnappyCompression)) {
    o.compression = rocksdb::kSnappyCompression;
  } else {
    o.compression = rocksdb::kNoCompression;
  }
  return o;
}

}  // namespace pto::cache
