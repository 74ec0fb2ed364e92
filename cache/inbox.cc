#include "cache/inbox.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cache/fs_safety.h"
#include "rocksdb/options.h"
#include "rocksdb/sst_file_reader.h"
#include "rocksdb/sst_file_writer.h"

namespace pto::cache::inbox {
namespace {

namespace fs = std::filesystem;

constexpr char kInbox[] = "inbox";
constexpr char kBatchPrefix[] = "b-";
constexpr char kTempPrefix[] = "tmp-";
constexpr char kRefusedPrefix[] = "refused-";
constexpr char kFileSuffix[] = ".sst";

std::atomic<uint64_t> next_sequence{0};

// The files of a batch: "<column family>.sst".
bool IsBatchFile(std::string_view name) {
  if (!name.ends_with(kFileSuffix) || name.size() == sizeof(kFileSuffix) - 1) return false;
  name.remove_suffix(sizeof(kFileSuffix) - 1);
  for (const char c : name) {
    if (!absl::ascii_islower(static_cast<unsigned char>(c)) &&
        !absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '_') {
      return false;
    }
  }
  return true;
}

std::string Display(const std::string& db_path, std::string_view name = "") {
  fs::path p = fs::path(db_path) / kInbox;
  if (!name.empty()) p /= name;
  return p.string();
}

// The inbox of `db_path`, opened without following a link and checked: NotFound if it does
// not exist (and `create` is false), FailedPrecondition if another user could change it.
absl::StatusOr<fs_safety::Fd> OpenInbox(const std::string& db_path, bool create) {
  absl::StatusOr<fs_safety::Fd> db = fs_safety::OpenDirectory(db_path);
  if (!db.ok()) return db.status();
  if (create) return fs_safety::MakeSubdirectory(db->get(), kInbox, Display(db_path));
  return fs_safety::OpenSubdirectory(db->get(), kInbox, Display(db_path));
}

// Why `batch` (its name set) of the inbox `inbox` may not be ingested (empty if it may):
// checked on descriptors, and what is checked is what RocksDB then opens by path, since no
// other user can change the inbox. Fills in the batch's files.
std::string BatchProblem(int inbox, const std::string& display, Pending* batch) {
  absl::StatusOr<fs_safety::Fd> dir = fs_safety::OpenSubdirectory(inbox, batch->name, display);
  if (!dir.ok()) return std::string(dir.status().message());
  struct stat st = {};
  if (::fstat(dir->get(), &st) != 0) return absl::StrCat("cannot stat '", display, "'");
  if (std::string why = fs_safety::NotOwnedByThisUser(st, display); !why.empty()) return why;
  for (const std::string& file : fs_safety::EntryNames(dir->get())) {
    const std::string file_display = (fs::path(display) / file).string();
    struct stat f = {};
    if (::fstatat(dir->get(), file.c_str(), &f, AT_SYMLINK_NOFOLLOW) != 0) {
      return absl::StrCat("cannot stat '", file_display, "'");
    }
    if (S_ISLNK(f.st_mode)) return fs_safety::LinkRefusal(file_display);
    if (!S_ISREG(f.st_mode) || !IsBatchFile(file)) {
      return absl::StrCat("'", file_display, "' is not a batch file");
    }
    if (std::string why = fs_safety::NotOwnedByThisUser(f, file_display); !why.empty()) return why;
    if (std::string why = fs_safety::OthersCanChange(f, file_display); !why.empty()) return why;
    batch->files[file.substr(0, file.size() - (sizeof(kFileSuffix) - 1))] = file_display;
  }
  return "";
}

struct Candidate {
  Pending batch;
  std::string problem;  // empty: it may be ingested
};

// The complete batches, oldest first, each with why it may not be ingested.
std::vector<Candidate> Candidates(const std::string& db_path, int inbox) {
  std::vector<Candidate> result;
  for (const std::string& name : fs_safety::EntryNames(inbox)) {
    if (!name.starts_with(kBatchPrefix)) continue;
    Candidate c;
    c.batch.db_path = db_path;
    c.batch.name = name;
    c.batch.dir = Display(db_path, name);
    c.problem = BatchProblem(inbox, c.batch.dir, &c.batch);
    result.push_back(std::move(c));
  }
  return result;
}

// Sorted by key, the last entry for each key kept.
std::vector<Entry> Normalized(const std::vector<Entry>& entries) {
  std::vector<Entry> sorted = entries;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Entry& a, const Entry& b) { return a.key < b.key; });
  std::vector<Entry> result;
  for (Entry& e : sorted) {
    if (!result.empty() && result.back().key == e.key) {
      result.back() = std::move(e);
    } else {
      result.push_back(std::move(e));
    }
  }
  return result;
}

// Writes `entries` as the SST file `name` of the batch directory `dir` (new, this user's:
// nobody else can put anything in it, so RocksDB may open the file by path).
absl::Status WriteFile(int dir, const std::string& display, const std::string& name,
                       const std::vector<Entry>& entries, const rocksdb::Options& options) {
  const std::string file = (fs::path(display) / name).string();
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
  rocksdb::Status s = writer.Open(file);
  for (const Entry& e : Normalized(entries)) {
    if (!s.ok()) break;
    switch (e.op) {
      case Entry::Op::kPut:
        s = writer.Put(e.key, e.value);
        break;
      case Entry::Op::kDelete:
        s = writer.Delete(e.key);
        break;
      case Entry::Op::kMerge:
        s = writer.Merge(e.key, e.value);
        break;
    }
  }
  if (s.ok()) s = writer.Finish();
  if (!s.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot write ", file, ": ", s.ToString()));
  }
  fs_safety::Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0)
    return absl::UnavailableError(absl::StrCat("cannot open ", file, " to sync it"));
  if (::fchmod(fd.get(), fs_safety::kFileMode) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot set the mode of ", file));
  }
  return fs_safety::Sync(fd.get(), file);
}

bool ProcessRuns(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

absl::Status WriteBatch(const std::string& db_path, const Batch& batch,
                        const rocksdb::Options& options) {
  absl::StatusOr<fs_safety::Fd> inbox = OpenInbox(db_path, /*create=*/true);
  if (!inbox.ok()) return absl::UnavailableError(inbox.status().message());
  const uint64_t sequence = next_sequence.fetch_add(1);
  const std::string temp = absl::StrCat(kTempPrefix, ::getpid(), "-", sequence);
  absl::StatusOr<fs_safety::Fd> dir =
      fs_safety::MakeSubdirectory(inbox->get(), temp, Display(db_path, temp), /*must_be_new=*/true);
  if (!dir.ok()) return absl::UnavailableError(dir.status().message());
  absl::Status status = absl::OkStatus();
  for (const auto& [family, entries] : batch) {
    if (entries.empty()) continue;
    status = WriteFile(dir->get(), Display(db_path, temp), family + kFileSuffix, entries, options);
    if (!status.ok()) break;
  }
  if (status.ok()) status = fs_safety::Sync(dir->get(), Display(db_path, temp));
  const int64_t micros = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  // Names sort by time, so the writer ingests batches in the order they were made.
  const std::string final_name =
      absl::StrFormat("%s%017d-%d-%d", kBatchPrefix, micros, ::getpid(), sequence);
  if (status.ok() &&
      ::renameat(inbox->get(), temp.c_str(), inbox->get(), final_name.c_str()) != 0) {
    status = absl::UnavailableError(absl::StrCat("cannot rename ", Display(db_path, temp), " to ",
                                                 Display(db_path, final_name)));
  }
  if (status.ok()) status = fs_safety::Sync(inbox->get(), Display(db_path));
  if (!status.ok()) {
    (void)fs_safety::RemoveOwnDirectory(inbox->get(), temp, IsBatchFile);
  }
  return status;
}

std::vector<Pending> List(const std::string& db_path) {
  std::vector<Pending> result;
  absl::StatusOr<fs_safety::Fd> inbox = OpenInbox(db_path, /*create=*/false);
  if (!inbox.ok()) return result;
  for (Candidate& c : Candidates(db_path, inbox->get())) {
    if (c.problem.empty()) result.push_back(std::move(c.batch));
  }
  return result;
}

Refusals SetAsideUnsafe(const std::string& db_path) {
  Refusals refusals;
  absl::StatusOr<fs_safety::Fd> inbox = OpenInbox(db_path, /*create=*/false);
  if (!inbox.ok()) {
    if (inbox.status().code() == absl::StatusCode::kFailedPrecondition) {
      refusals.inbox =
          absl::StrCat("not ingesting the inbox of '", db_path, "': ", inbox.status().message());
    }
    return refusals;
  }
  for (const Candidate& c : Candidates(db_path, inbox->get())) {
    if (c.problem.empty()) continue;
    const std::string aside = kRefusedPrefix + c.batch.name;
    if (::renameat(inbox->get(), c.batch.name.c_str(), inbox->get(), aside.c_str()) != 0) {
      continue;  // gone meanwhile
    }
    refusals.batches.push_back(absl::StrCat("not ingesting '", c.batch.dir, "' (set aside as '",
                                            Display(db_path, aside), "'): ", c.problem));
  }
  return refusals;
}

std::optional<std::string> Lookup(const std::string& db_path, const std::string& family,
                                  const std::string& key, const rocksdb::Options& options) {
  std::vector<Pending> pending = List(db_path);
  for (auto batch = pending.rbegin(); batch != pending.rend(); ++batch) {
    auto file = batch->files.find(family);
    if (file == batch->files.end()) continue;
    rocksdb::SstFileReader reader(options);
    if (!reader.Open(file->second).ok()) continue;  // ingested meanwhile, or unusable
    rocksdb::ReadOptions read;
    read.verify_checksums = true;
    std::unique_ptr<rocksdb::Iterator> it(reader.NewIterator(read));
    it->Seek(key);
    if (it->Valid() && it->key() == key) return it->value().ToString();
  }
  return std::nullopt;
}

void Remove(const Pending& batch) {
  absl::StatusOr<fs_safety::Fd> inbox = OpenInbox(batch.db_path, /*create=*/false);
  if (inbox.ok()) (void)fs_safety::RemoveOwnDirectory(inbox->get(), batch.name, IsBatchFile);
}

void RemoveAbandonedTemporaries(const std::string& db_path) {
  absl::StatusOr<fs_safety::Fd> inbox = OpenInbox(db_path, /*create=*/false);
  if (!inbox.ok()) return;
  for (const std::string& name : fs_safety::EntryNames(inbox->get())) {
    if (!name.starts_with(kTempPrefix)) continue;
    int64_t pid = 0;
    const std::string_view rest = std::string_view(name).substr(sizeof(kTempPrefix) - 1);
    const std::string_view digits = rest.substr(0, rest.find('-'));
    if (!absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()), &pid) ||
        ProcessRuns(static_cast<pid_t>(pid))) {
      continue;
    }
    (void)fs_safety::RemoveOwnDirectory(inbox->get(), name, IsBatchFile);
  }
}

}  // namespace pto::cache::inbox
