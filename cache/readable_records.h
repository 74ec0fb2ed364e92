// Reading a column family past damaged blocks. RocksDB's iterator stops for good at the first
// data block that fails its checksum, so every record after it would be out of reach. Cache
// keys are a fixed prefix and 32 lowercase hex digits (a 128-bit hash, so they spread evenly
// over that space), which makes it possible to seek beyond a damaged block: probe seek targets
// spaced finer than the records (and at keys known to exist), and once a probe reads again,
// bisect between the last damaged probe and it for the exact first readable key, so that no
// record of the next readable block is skipped.
//
// A readable block lying between two damaged ones is found only if some probe lands in it:
// probes start at an eighth of the average gap between records and widen (doubling after every
// eight damaged probes) across long damaged stretches, so only a narrow readable island among
// scattered damage can be missed. Damage from one event (a flipped or zeroed range of a file)
// is contiguous and never hides readable blocks.
#ifndef PTO_CACHE_READABLE_RECORDS_H_
#define PTO_CACHE_READABLE_RECORDS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
}  // namespace rocksdb

namespace pto::cache {

struct ReadableRecordsOptions {
  // Keys are key_prefix + 32 lowercase hex digits ("k-", "p-", "t-", or "lru/k-" for the usage
  // entries in "meta"). Other keys are read as they come, but damage is only skipped within
  // the prefix's range.
  std::string key_prefix;
  // Inclusive key bounds; empty: unbounded.
  std::string lower, upper;
  // Keys known to exist (e.g. kernels named by the usage index): also tried as seek targets.
  std::vector<std::string> known_keys;
  // About how many records the range holds (sets the probe spacing); 0: unknown.
  int64_t expected_records = 0;
};

struct ReadableRecordsReport {
  int64_t read = 0;            // records passed to the callback
  int64_t damaged_ranges = 0;  // stretches of unreadable blocks skipped
  std::string first_damage;    // RocksDB's message for the first of them
};

// Calls `fn` for every record of `family` within the bounds that can be read, in key order,
// with checksums verified. Errors other than corruption (an I/O error) stop the walk and are
// returned as Unavailable.
absl::StatusOr<ReadableRecordsReport> ReadReadableRecords(
    rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family, const ReadableRecordsOptions& options,
    const std::function<void(std::string_view key, std::string_view value)>& fn);

}  // namespace pto::cache

#endif  // PTO_CACHE_READABLE_RECORDS_H_
