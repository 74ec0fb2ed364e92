#include "cache/fs_safety.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pto::cache::fs_safety {
namespace {

bool OwnedByThisUserOrRoot(const struct stat& st) {
  return st.st_uid == ::geteuid() || st.st_uid == 0;
}

std::string ErrnoText(int error) { return std::strerror(error); }

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

std::string LinkRefusal(const std::string& name) {
  return absl::StrCat("'", name,
                      "' is a symbolic link, and pto never follows links in a cache directory");
}

std::string OthersCanChange(const struct stat& st, const std::string& name, bool sticky_suffices) {
  if (S_ISLNK(st.st_mode)) return LinkRefusal(name);
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    const bool sticky = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
    if (!(sticky_suffices && sticky)) {
      return absl::StrFormat("'%s' can be written by other users (mode %04o)%s", name,
                             st.st_mode & 07777, sticky_suffices ? " and has no sticky bit" : "");
    }
  }
  if (!OwnedByThisUserOrRoot(st)) {
    return absl::StrCat("'", name, "' is owned by another user (uid ", st.st_uid, ")");
  }
  return "";
}

std::string NotOwnedByThisUser(const struct stat& st, const std::string& name) {
  if (st.st_uid == ::geteuid()) return "";
  return absl::StrCat("'", name, "' is owned by another user (uid ", st.st_uid, ")");
}

absl::StatusOr<Fd> OpenDirectory(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    std::string message =
        absl::StrCat("cannot open the directory '", path, "': ", ErrnoText(error));
    if (error == ENOENT) return absl::NotFoundError(message);
    return absl::UnavailableError(message);
  }
  return fd;
}

absl::StatusOr<Fd> OpenSubdirectory(int dir, const std::string& name, const std::string& display) {
  Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ENOENT) return absl::NotFoundError(absl::StrCat("'", display, "' does not exist"));
    struct stat st = {};
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      if (S_ISLNK(st.st_mode)) return absl::FailedPreconditionError(LinkRefusal(display));
      if (!S_ISDIR(st.st_mode)) {
        return absl::FailedPreconditionError(absl::StrCat("'", display, "' is not a directory"));
      }
    }
    return absl::UnavailableError(
        absl::StrCat("cannot open the directory '", display, "': ", ErrnoText(error)));
  }
  struct stat st = {};
  if (::fstat(fd.get(), &st) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot stat '", display, "': ", ErrnoText(errno)));
  }
  if (std::string why = OthersCanChange(st, display); !why.empty()) {
    return absl::FailedPreconditionError(why);
  }
  return fd;
}

absl::StatusOr<Fd> MakeSubdirectory(int dir, const std::string& name, const std::string& display,
                                    bool must_be_new) {
  bool made = false;
  if (::mkdirat(dir, name.c_str(), kDirectoryMode) == 0) {
    made = true;
  } else if (errno != EEXIST) {
    return absl::UnavailableError(
        absl::StrCat("cannot create the directory '", display, "': ", ErrnoText(errno)));
  } else if (must_be_new) {
    return absl::AlreadyExistsError(absl::StrCat("'", display, "' exists already"));
  }
  absl::StatusOr<Fd> fd = OpenSubdirectory(dir, name, display);
  // The umask may have narrowed the mode: set it exactly.
  if (fd.ok() && made && ::fchmod(fd->get(), kDirectoryMode) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot set the mode of '", display, "': ", ErrnoText(errno)));
  }
  return fd;
}

absl::Status MakeDirectories(const std::string& path) {
  std::filesystem::path prefix;
  for (const std::filesystem::path& part : std::filesystem::path(path)) {
    prefix /= part;
    if (part.empty() || part == "/" || part == "." || part == "..") continue;
    if (::mkdir(prefix.c_str(), kDirectoryMode) == 0) {
      Fd fd(::open(prefix.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (fd.get() >= 0) (void)::fchmod(fd.get(), kDirectoryMode);
    } else if (errno != EEXIST) {
      return absl::UnavailableError(
          absl::StrCat("cannot create the directory '", prefix.string(), "': ", ErrnoText(errno)));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> EntryNames(int dir) {
  std::vector<std::string> names;
  const int copy = ::dup(dir);  // closedir closes its descriptor
  if (copy < 0) return names;
  DIR* d = ::fdopendir(copy);
  if (d == nullptr) {
    ::close(copy);
    return names;
  }
  ::rewinddir(d);  // the copy shares the original's position
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

absl::Status Sync(int fd, const std::string& display) {
  if (::fsync(fd) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot sync '", display, "': ", ErrnoText(errno)));
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  std::string temp = path + ".tmp-XXXXXX";
  Fd fd(::mkostemp(temp.data(), O_CLOEXEC));
  const std::string what = absl::StrCat("cannot write '", path, "'");
  if (fd.get() < 0) return absl::ErrnoToStatus(errno, what);
  auto fail = [&](int error) {
    ::unlink(temp.c_str());
    return absl::ErrnoToStatus(error, what);
  };
  if (::fchmod(fd.get(), kFileMode) != 0) return fail(errno);
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(n < 0 ? errno : EIO);
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail(errno);
  if (std::rename(temp.c_str(), path.c_str()) != 0) return fail(errno);
  return absl::OkStatus();
}

bool RemoveOwnDirectory(int dir, const std::string& name,
                        const std::function<bool(std::string_view)>& expected) {
  struct stat st = {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid()) {
    return false;
  }
  Fd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat opened = {};
  if (sub.get() < 0 || ::fstat(sub.get(), &opened) != 0 || opened.st_ino != st.st_ino ||
      opened.st_dev != st.st_dev || opened.st_uid != ::geteuid()) {
    return false;
  }
  const std::vector<std::string> names = EntryNames(sub.get());
  for (const std::string& file : names) {
    struct stat f = {};
    if (::fstatat(sub.get(), file.c_str(), &f, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(f.st_mode) ||
        f.st_uid != ::geteuid() || !expected(file)) {
      return false;
    }
  }
  for (const std::string& file : names) {
    if (::unlinkat(sub.get(), file.c_str(), 0) != 0 && errno != ENOENT) return false;
  }
  return ::unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0;
}

}  // namespace pto::cache::fs_safety
