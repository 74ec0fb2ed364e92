#include "cache/trust.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cache/fs_safety.h"

namespace pto::cache {
namespace {

namespace fs = std::filesystem;

// Subdirectories pto writes into; another user who could change one could plant links in it.
constexpr const char* kWrittenSubdirectories[] = {"inbox", "readers", "lost", "rebuild"};

std::string Resolved(const fs::path& p) {
  std::unique_ptr<char, decltype(&::free)> real(::realpath(p.c_str(), nullptr), &::free);
  return real ? std::string(real.get()) : std::string();
}

// The directories a lookup of `path` passes through: each prefix of the absolute path,
// resolved, and the directories above it (a link's own directory is the one above the
// prefix that names it). `path` itself is left out. Stops at the first prefix that does not
// exist: pto creates the rest.
std::set<std::string> DirectoriesOnTheWay(const std::string& path) {
  std::set<std::string> result;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  if (ec) return result;
  std::vector<fs::path> prefixes;
  fs::path prefix;
  for (const fs::path& part : absolute) {
    if (part.empty()) continue;
    prefix /= part;
    prefixes.push_back(prefix);
  }
  const std::string target = Resolved(absolute);
  for (const fs::path& p : prefixes) {
    const std::string real = Resolved(p);
    if (real.empty()) break;
    fs::path up = fs::path(real);
    if (real == target) up = up.parent_path();
    for (;; up = up.parent_path()) {
      if (up.string() != target) result.insert(up.string());
      if (up == up.parent_path()) break;
    }
  }
  return result;
}

}  // namespace

absl::StatusOr<DirectoryTrust> CheckCacheDirectory(const std::string& path) {
  DirectoryTrust trust;
  auto not_writable = [&trust](const std::string& why) {
    if (why.empty() || !trust.writable) return;
    trust.writable = false;
    trust.why_not_writable = why;
  };
  for (const std::string& dir : DirectoriesOnTheWay(path)) {
    struct stat st = {};
    if (::stat(dir.c_str(), &st) != 0) continue;
    not_writable(fs_safety::OthersCanChange(st, dir, /*sticky_suffices=*/true));
  }

  std::string first_file_problem;
  int file_problems = 0;
  struct stat st = {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    absl::StatusOr<fs_safety::Fd> dir = fs_safety::OpenDirectory(path);
    if (dir.ok() && ::fstat(dir->get(), &st) == 0) {
      not_writable(fs_safety::OthersCanChange(st, path));
      for (const std::string& name : fs_safety::EntryNames(dir->get())) {
        const std::string display = (fs::path(path) / name).string();
        struct stat entry = {};
        if (::fstatat(dir->get(), name.c_str(), &entry, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISLNK(entry.st_mode)) {
          return absl::FailedPreconditionError(fs_safety::LinkRefusal(display));
        }
        if (S_ISDIR(entry.st_mode)) {
          for (const char* written : kWrittenSubdirectories) {
            if (name == written) not_writable(fs_safety::OthersCanChange(entry, display));
          }
        } else if (S_ISREG(entry.st_mode)) {
          std::string why = fs_safety::OthersCanChange(entry, display);
          if (why.empty()) continue;
          if (file_problems++ == 0) first_file_problem = std::move(why);
        }
      }
    }
  }
  if (!trust.writable) {
    trust.code = false;
    trust.why_not_code = trust.why_not_writable;
  } else if (file_problems > 0) {
    trust.code = false;
    trust.why_not_code = first_file_problem;
    if (file_problems > 1) {
      absl::StrAppend(&trust.why_not_code, " (and ", file_problems - 1, " more files)");
    }
  }
  return trust;
}

absl::Status RefuseToWrite(const DirectoryTrust& trust) {
  return absl::FailedPreconditionError(
      absl::StrCat(trust.why_not_writable,
                   ", and pto writes only to a cache directory that no other user can change"));
}

}  // namespace pto::cache
