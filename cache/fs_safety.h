// File-system operations for cache directories that other users may try to subvert
// (docs/cache.md, "Directories and files"). Nothing here follows a symbolic link inside a
// cache directory (openat with O_NOFOLLOW); owners and modes are checked with fstat on open
// descriptors, not on paths that can change between the check and the use; temporary files
// are created with O_EXCL under names nobody can guess; new files and directories get fixed
// modes whatever the umask; and only regular files this user owns, with the names the caller
// expects, are ever deleted.
#ifndef PTO_CACHE_FS_SAFETY_H_
#define PTO_CACHE_FS_SAFETY_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pto::cache::fs_safety {

// The modes pto gives what it creates in a cache directory (and the bundles it writes).
inline constexpr mode_t kDirectoryMode = 0755;
inline constexpr mode_t kFileMode = 0644;

// An open file descriptor, closed when this goes away.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// "'<name>' is a symbolic link, and pto never follows links in a cache directory".
std::string LinkRefusal(const std::string& name);

// Why a user other than this one could change what `st` describes, starting "'<name>' ..."
// (empty if none can): group or others may write it (for a directory with the sticky bit that
// is allowed when `sticky_suffices`: others cannot then rename or delete what they do not
// own), or its owner is neither this user nor root.
std::string OthersCanChange(const struct stat& st, const std::string& name,
                            bool sticky_suffices = false);

// Empty if this user owns what `st` describes, else "'<name>' is owned by another user
// (uid N)" (root counts as another user here).
std::string NotOwnedByThisUser(const struct stat& st, const std::string& name);

// Opens the directory `path`, following links in `path` itself (the caller chose it).
absl::StatusOr<Fd> OpenDirectory(const std::string& path);

// Opens the subdirectory `name` of `dir` without following a link, and checks on the open
// descriptor that no other user can change it. `display` names it in errors. NotFound if it
// does not exist; FailedPrecondition for a link, something else than a directory, or a
// directory others can change; Unavailable for other failures.
absl::StatusOr<Fd> OpenSubdirectory(int dir, const std::string& name, const std::string& display);

// As OpenSubdirectory, after creating the subdirectory with kDirectoryMode if it is missing.
// With `must_be_new`, an existing entry of that name is an error (AlreadyExists).
absl::StatusOr<Fd> MakeSubdirectory(int dir, const std::string& name, const std::string& display,
                                    bool must_be_new = false);

// Like `mkdir -p path`: the directories it creates get kDirectoryMode; existing ones are left
// as they are.
absl::Status MakeDirectories(const std::string& path);

// The names in `dir` other than "." and "..", sorted. Empty if it cannot be read.
std::vector<std::string> EntryNames(int dir);

// fsync(fd); `display` names the file in the error.
absl::Status Sync(int fd, const std::string& display);

// Replaces the file at `path` with `bytes`: they are written to a new temporary file next to
// it (created with O_EXCL under a random name, so a planted file or link is never opened),
// synced, given kFileMode and renamed over `path` (a link at `path` is replaced, not
// followed). If a step fails, the error of its errno (NotFound for a missing directory, ...)
// with "cannot write '<path>'", and the temporary file is removed.
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes);

// Removes the subdirectory `name` of `dir` if it is a directory (not a link) this user owns,
// holding only regular files this user owns whose names `expected` accepts. Anything else is
// left whole. Returns whether it is gone.
bool RemoveOwnDirectory(int dir, const std::string& name,
                        const std::function<bool(std::string_view)>& expected);

}  // namespace pto::cache::fs_safety

#endif  // PTO_CACHE_FS_SAFETY_H_
