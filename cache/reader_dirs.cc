#include "cache/reader_dirs.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cache/fs_safety.h"

namespace pto::cache::reader_dirs {
namespace {

namespace fs = std::filesystem;

constexpr char kReaders[] = "readers";

std::string Display(const std::string& db_path, std::string_view name = "") {
  fs::path p = fs::path(db_path) / kReaders;
  if (!name.empty()) p /= name;
  return p.string();
}

absl::StatusOr<fs_safety::Fd> OpenReaders(const std::string& db_path) {
  absl::StatusOr<fs_safety::Fd> db = fs_safety::OpenDirectory(db_path);
  if (!db.ok()) return db.status();
  return fs_safety::OpenSubdirectory(db->get(), kReaders, Display(db_path));
}

// RocksDB's info log and its rotated copies: what a reader's directory holds.
bool IsInfoLog(std::string_view name) { return name == "LOG" || name.starts_with("LOG.old."); }

// The pid of a reader directory's name "<pid>-<n>", or 0 if it is not one.
pid_t PidOf(std::string_view name) {
  const size_t dash = name.find('-');
  if (dash == std::string_view::npos || dash == 0) return 0;
  for (const char c : name) {
    if (c != '-' && !absl::ascii_isdigit(static_cast<unsigned char>(c))) return 0;
  }
  int64_t pid = 0;
  if (!absl::SimpleAtoi(absl::string_view(name.data(), dash), &pid) || pid <= 0 || pid > INT32_MAX)
    return 0;
  return static_cast<pid_t>(pid);
}

}  // namespace

absl::StatusOr<std::string> Make(const std::string& db_path) {
  static std::atomic<int> readers{0};
  absl::StatusOr<fs_safety::Fd> db = fs_safety::OpenDirectory(db_path);
  if (!db.ok()) return db.status();
  absl::StatusOr<fs_safety::Fd> dir =
      fs_safety::MakeSubdirectory(db->get(), kReaders, Display(db_path));
  if (!dir.ok()) return dir.status();
  const std::string name = absl::StrCat(::getpid(), "-", readers.fetch_add(1));
  absl::StatusOr<fs_safety::Fd> mine =
      fs_safety::MakeSubdirectory(dir->get(), name, Display(db_path, name), /*must_be_new=*/true);
  if (!mine.ok()) return mine.status();
  return Display(db_path, name);
}

void Remove(const std::string& db_path, const std::string& reader_dir) {
  absl::StatusOr<fs_safety::Fd> dir = OpenReaders(db_path);
  if (dir.ok()) {
    (void)fs_safety::RemoveOwnDirectory(dir->get(), fs::path(reader_dir).filename().string(),
                                        IsInfoLog);
  }
}

void RemoveAbandoned(const std::string& db_path) {
  absl::StatusOr<fs_safety::Fd> dir = OpenReaders(db_path);
  if (!dir.ok()) return;
  for (const std::string& name : fs_safety::EntryNames(dir->get())) {
    const pid_t pid = PidOf(name);
    if (pid <= 0 || ::kill(pid, 0) == 0 || errno == EPERM) continue;
    (void)fs_safety::RemoveOwnDirectory(dir->get(), name, IsInfoLog);
  }
}

}  // namespace pto::cache::reader_dirs
