// What pto may do with a cache directory, decided by who besides this user could change it
// (docs/cache.md, "Directories and files"). Object code from the cache is machine code the
// runtime jumps to, and RocksDB opens its files by path: a directory another user could
// change is never written to (links could be planted between a check and RocksDB's open), and
// code is loaded only when no other user could have changed the files it comes from.
#ifndef PTO_CACHE_TRUST_H_
#define PTO_CACHE_TRUST_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pto::cache {

struct DirectoryTrust {
  // pto may write into the directory (open it as writer or reader). False when a user other
  // than this one (and root) could change the directory, its inbox/, readers/, lost/ or
  // rebuild/ subdirectory, or a directory on the way to it (one that others can write is allowed
  // when it has the sticky bit, as /tmp has).
  bool writable = true;
  // Object code read from it may be loaded. False when it is not writable, or when another
  // user could change one of the files in it.
  bool code = true;
  std::string why_not_writable;  // "'<path>' can be written by other users (mode 0777)", ...
  std::string why_not_code;
};

// Checks the cache directory `path`, which need not exist yet (then the directories on the
// way to it are checked). FailedPrecondition, naming the entry, when no use of it is safe: a
// symbolic link among its entries (LOCK, CURRENT, MANIFEST-*, *.sst, inbox, readers, lost or
// any other name). A path that is not a directory passes here: opening it reports that.
absl::StatusOr<DirectoryTrust> CheckCacheDirectory(const std::string& path);

// The error for writing to a directory that is not writable: FailedPrecondition
// "<why_not_writable>, and pto writes only to a cache directory that no other user can change".
absl::Status RefuseToWrite(const DirectoryTrust& trust);

}  // namespace pto::cache

#endif  // PTO_CACHE_TRUST_H_
