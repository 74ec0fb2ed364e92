// Rebuilding the column families of a cache database that hold damaged blocks. RocksDB cannot
// iterate past a block that fails its checksum, and a compaction that reads one fails, so a
// family with a damaged block stays unreadable (and `pto cache verify` fails) until it is
// rebuilt. A rebuild reads the family's records past the damage (readable_records.h), writes
// them to an SST file, drops the family, creates it again and ingests the file: the records
// that were intact are kept, those in damaged blocks are lost (they are cache entries, rebuilt
// when next needed).
//
// Crash safety: the SST file is complete (written, synced and renamed to
// <path>/rebuild/<family>.sst) before the family is dropped, and it is removed only after its
// ingestion. A rebuild killed in between leaves the file; the next writer to open the
// database (or the next rebuild) ingests it into the family and removes it
// (FinishInterruptedRebuild).
#ifndef PTO_CACHE_REBUILD_FAMILIES_H_
#define PTO_CACHE_REBUILD_FAMILIES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
}  // namespace rocksdb

namespace pto::cache {

struct FamilyRebuild {
  std::string family;  // "kernels", "plans", "tuning" or "meta"
  int64_t kept = 0;    // records read past the damage and written back
  // Records the family's files held that could not be read (from RocksDB's file metadata:
  // exact when the family holds one version per key, as after a compaction).
  int64_t lost = 0;
  std::string damage;  // RocksDB's message for the first damaged block
};

// Opens the database at `path` as its writer, reads every family, and rebuilds those with
// damaged blocks ("meta" too: kernel usage entries, counters and the schema record; usage
// entries of kernels that were lost are dropped). Returns the families rebuilt, in the order
// kernels, plans, tuning, meta (empty: no damage). FailedPrecondition when another process
// (or a store in this one) has the database open as its writer; Unavailable or DataLoss
// when it cannot be opened at all.
absl::StatusOr<std::vector<FamilyRebuild>> RebuildDamagedFamilies(const std::string& path);

// Ingests the files an interrupted rebuild left in <path>/rebuild/ into their families
// (`families` are the open database's handles) and removes the directory. Returns how many
// files were ingested.
absl::StatusOr<int> FinishInterruptedRebuild(
    rocksdb::DB& db, const std::vector<rocksdb::ColumnFamilyHandle*>& families,
    const std::string& path);

}  // namespace pto::cache

#endif  // PTO_CACHE_REBUILD_FAMILIES_H_
