// The readers/ subdirectory of a cache database shared by several processes: one directory
// per reader store, "<pid>-<n>", where its RocksDB secondary instance keeps its info log
// (LOG, LOG.old.*). Made and removed without following links (fs_safety.h): a `readers`
// link planted in the database directory is never written or deleted through.
#ifndef PTO_CACHE_READER_DIRS_H_
#define PTO_CACHE_READER_DIRS_H_

#include <string>

#include "absl/status/statusor.h"

namespace pto::cache::reader_dirs {

// Creates a new <db_path>/readers/<pid>-<n> (and readers/ if it is missing), mode 0755 both,
// and returns its path. An error if readers/ is a link or another user could change it.
absl::StatusOr<std::string> Make(const std::string& db_path);

// Removes a directory Make returned, if it holds only its info log files.
void Remove(const std::string& db_path, const std::string& reader_dir);

// Removes the directories of reader processes that no longer run (killed ones leave theirs).
void RemoveAbandoned(const std::string& db_path);

}  // namespace pto::cache::reader_dirs

#endif  // PTO_CACHE_READER_DIRS_H_
