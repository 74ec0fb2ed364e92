#include "cache/inbox.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "rocksdb/options.h"
#include "rocksdb/sst_file_reader.h"
#include "rocksdb/sst_file_writer.h"

namespace pto::cache::inbox {
namespace {

namespace fs = std::filesystem;

constexpr char kBatchPrefix[] = "b-";
constexpr char kTempPrefix[] = "tmp-";

std::atomic<uint64_t> next_sequence{0};

absl::Status SyncPath(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), (directory ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("cannot open ", path, " to sync it"));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return absl::UnavailableError(absl::StrCat("cannot sync ", path));
  return absl::OkStatus();
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

absl::Status WriteFile(const std::string& file, const std::vector<Entry>& entries,
                       const rocksdb::Options& options) {
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
  if (!s.ok())
    return absl::UnavailableError(absl::StrCat("cannot write ", file, ": ", s.ToString()));
  return SyncPath(file, /*directory=*/false);
}

bool ProcessRuns(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

std::string InboxDir(const std::string& db_path) { return (fs::path(db_path) / "inbox").string(); }

absl::Status WriteBatch(const std::string& db_path, const Batch& batch,
                        const rocksdb::Options& options) {
  const std::string inbox = InboxDir(db_path);
  std::error_code ec;
  fs::create_directories(inbox, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", inbox, ": ", ec.message()));
  const uint64_t sequence = next_sequence.fetch_add(1);
  const std::string temp =
      (fs::path(inbox) / absl::StrCat(kTempPrefix, ::getpid(), "-", sequence)).string();
  fs::create_directory(temp, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", temp, ": ", ec.message()));
  absl::Status status = absl::OkStatus();
  for (const auto& [family, entries] : batch) {
    if (entries.empty()) continue;
    status = WriteFile((fs::path(temp) / (family + ".sst")).string(), entries, options);
    if (!status.ok()) break;
  }
  if (status.ok()) status = SyncPath(temp, /*directory=*/true);
  const int64_t micros = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  // Names sort by time, so the writer ingests batches in the order they were made.
  const std::string final_name = (fs::path(inbox) / absl::StrFormat("%s%017d-%d-%d", kBatchPrefix,
                                                                    micros, ::getpid(), sequence))
                                     .string();
  if (status.ok() && std::rename(temp.c_str(), final_name.c_str()) != 0) {
    status = absl::UnavailableError(absl::StrCat("cannot rename ", temp, " to ", final_name));
  }
  if (status.ok()) status = SyncPath(inbox, /*directory=*/true);
  if (!status.ok()) fs::remove_all(temp, ec);
  return status;
}

std::vector<Pending> List(const std::string& db_path) {
  std::vector<Pending> result;
  std::error_code ec;
  fs::directory_iterator it(InboxDir(db_path), ec);
  if (ec) return result;
  for (const fs::directory_entry& dir : it) {
    const std::string name = dir.path().filename().string();
    if (name.rfind(kBatchPrefix, 0) != 0) continue;
    Pending p;
    p.dir = dir.path().string();
    std::error_code inner;
    for (const fs::directory_entry& file : fs::directory_iterator(dir.path(), inner)) {
      if (file.path().extension() != ".sst") continue;
      p.files[file.path().stem().string()] = file.path().string();
    }
    result.push_back(std::move(p));
  }
  std::sort(result.begin(), result.end(),
            [](const Pending& a, const Pending& b) { return a.dir < b.dir; });
  return result;
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
  std::error_code ec;
  fs::remove_all(batch.dir, ec);
}

void RemoveAbandonedTemporaries(const std::string& db_path) {
  std::error_code ec;
  fs::directory_iterator it(InboxDir(db_path), ec);
  if (ec) return;
  for (const fs::directory_entry& dir : it) {
    const std::string name = dir.path().filename().string();
    if (name.rfind(kTempPrefix, 0) != 0) continue;
    const pid_t pid = static_cast<pid_t>(std::atoll(name.c_str() + sizeof(kTempPrefix) - 1));
    if (ProcessRuns(pid)) continue;
    std::error_code inner;
    fs::remove_all(dir.path(), inner);
  }
}

}  // namespace pto::cache::inbox
