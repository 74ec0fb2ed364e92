// The inbox of a cache database shared by several processes. RocksDB has one writer; a process
// that is not it hands its writes over as a batch of SST files (RocksDB's own table format,
// made with rocksdb::SstFileWriter), one file per column family, in a directory
// <db>/inbox/b-<time>-<pid>-<seq>/ that appears atomically: the files are written and synced
// under <db>/inbox/tmp-<pid>-<seq>/, which is then renamed and the inbox directory synced. Once
// WriteBatch returns, the batch survives the process being killed. The writer ingests each
// batch atomically (DB::IngestExternalFiles) in name order and then removes it.
//
// Nothing here follows a link (fs_safety.h). The inbox, its batches and their files are
// created with fixed modes, and a batch is ingested only if this user owns it and its files
// and no other user can write them; any other batch is set aside (renamed
// refused-<name>, never ingested or deleted) with a warning. An inbox that another user could
// change is not used at all.
#ifndef PTO_CACHE_INBOX_H_
#define PTO_CACHE_INBOX_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace rocksdb {
struct Options;
}  // namespace rocksdb

namespace pto::cache::inbox {

struct Entry {
  enum class Op { kPut, kDelete, kMerge } op = Op::kPut;
  std::string key;
  std::string value;
};
// Entries per column family name. Within a family the last entry for a key wins.
using Batch = std::map<std::string, std::vector<Entry>>;

// A batch waiting to be ingested: its directory and one SST file per column family.
struct Pending {
  std::string db_path;
  std::string name;                          // "b-..."
  std::string dir;                           // <db_path>/inbox/<name>
  std::map<std::string, std::string> files;  // family -> file path
};

// Writes `batch` (at least one entry) as a new batch directory; durable when it returns.
// `options` are the table options the files are written with (comparator, compression).
absl::Status WriteBatch(const std::string& db_path, const Batch& batch,
                        const rocksdb::Options& options);

// Complete batches that may be ingested, oldest first. An inbox that is missing, unreadable or
// that another user could change is an empty one.
std::vector<Pending> List(const std::string& db_path);

// What SetAsideUnsafe found (each message starts without "pto cache: ").
struct Refusals {
  std::string inbox;                 // why the whole inbox is not used, or empty
  std::vector<std::string> batches;  // one message per batch set aside
};
// Writer: renames every complete batch that may not be ingested to refused-<name>. Called
// before List, each round.
Refusals SetAsideUnsafe(const std::string& db_path);

// The value the newest pending batch that puts `key` in `family` gives it, or nullopt.
// (Tombstones are not seen: a reader tracks the keys it deleted itself.)
std::optional<std::string> Lookup(const std::string& db_path, const std::string& family,
                                  const std::string& key, const rocksdb::Options& options);

// Removes a batch directory (after it was ingested, or when it is unusable).
void Remove(const Pending& batch);
// Removes temporary directories left by processes that no longer run (killed mid-write).
void RemoveAbandonedTemporaries(const std::string& db_path);

}  // namespace pto::cache::inbox

#endif  // PTO_CACHE_INBOX_H_
