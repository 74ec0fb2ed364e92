#include "cache/rebuild_families.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cache/fs_safety.h"
#include "cache/readable_records.h"
#include "cache/rocksdb_options.h"
#include "rocksdb/db.h"
#include "rocksdb/sst_file_writer.h"
#include "rocksdb/table_properties.h"
#include "rocksdb/write_batch.h"

namespace pto::cache {
namespace {

namespace fs = std::filesystem;

constexpr char kRebuildDir[] = "rebuild";
constexpr const char* kRecordFamilies[] = {kKernelsFamily, kPlansFamily, kTuningFamily};

absl::Status FromRocks(const rocksdb::Status& s, std::string_view what, const std::string& path) {
  const std::string message = absl::StrCat(std::string(what), " (", path, "): ", s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(message);
  return absl::UnavailableError(message);
}

// The rebuild directory of the database at `path`, opened (and with `create`, made with a fixed
// mode) without following a link, and checked: no other user may be able to change it.
absl::StatusOr<fs_safety::Fd> OpenRebuildDir(const std::string& path, bool create) {
  absl::StatusOr<fs_safety::Fd> db = fs_safety::OpenDirectory(path);
  if (!db.ok()) return db.status();
  const std::string display = (fs::path(path) / kRebuildDir).string();
  if (create) return fs_safety::MakeSubdirectory(db->get(), kRebuildDir, display);
  return fs_safety::OpenSubdirectory(db->get(), kRebuildDir, display);
}

// What a rebuild leaves in its directory: "<family>.sst" and "<family>.sst.tmp".
bool IsRebuildFile(std::string_view name) {
  return name.ends_with(".sst") || name.ends_with(".sst.tmp");
}

// Removes the rebuild directory (only files a rebuild made, this user's).
void RemoveRebuildDir(const std::string& path) {
  absl::StatusOr<fs_safety::Fd> db = fs_safety::OpenDirectory(path);
  if (db.ok()) (void)fs_safety::RemoveOwnDirectory(db->get(), kRebuildDir, IsRebuildFile);
}

// Makes a rename in `dir` durable.
void SyncDirectory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

// The database opened as its writer, with every column family.
class Database {
 public:
  ~Database() {
    if (db_ == nullptr) return;
    for (rocksdb::ColumnFamilyHandle* h : handles_) {
      if (h != nullptr) db_->DestroyColumnFamilyHandle(h);
    }
    db_->Close().PermitUncheckedError();
  }

  absl::Status Open(const std::string& path) {
    path_ = path;
    rocksdb::DBOptions options = DbOptions();
    options.create_if_missing = false;
    std::vector<std::string> names;
    rocksdb::Status s = rocksdb::DB::ListColumnFamilies(options, path, &names);
    if (!s.ok()) return FromRocks(s, "cannot open the cache database", path);
    // A family an interrupted rebuild dropped is created again (create_missing_column_families).
    for (const char* name : {kKernelsFamily, kPlansFamily, kTuningFamily, kMetaFamily}) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const std::string& name : names) families.emplace_back(name, FamilyOptions(name));
    rocksdb::DB* raw = nullptr;
    s = rocksdb::DB::Open(options, path, families, &handles_, &raw);
    if (!s.ok()) {
      if (absl::StrContains(absl::AsciiStrToLower(s.ToString()), "lock")) {
        return absl::FailedPreconditionError(absl::StrCat(
            "cannot rebuild the cache database at '", path,
            "' while another process (or another store in this one) has it open as its "
            "writer: ",
            s.ToString()));
      }
      return FromRocks(s, "cannot open the cache database", path);
    }
    db_.reset(raw);
    return absl::OkStatus();
  }

  rocksdb::DB& db() { return *db_; }
  const std::vector<rocksdb::ColumnFamilyHandle*>& handles() const { return handles_; }
  rocksdb::ColumnFamilyHandle*& Family(std::string_view name) {
    for (rocksdb::ColumnFamilyHandle*& h : handles_) {
      if (h->GetName() == name) return h;
    }
    static rocksdb::ColumnFamilyHandle* none = nullptr;  // never reached: Open adds ours
    return none;
  }

  // Records the family's files hold (entries minus deletions), or -1 if a file cannot be read.
  int64_t RecordsInFiles(std::string_view name) {
    rocksdb::TablePropertiesCollection tables;
    if (!db_->GetPropertiesOfAllTables(Family(name), &tables).ok()) return -1;
    int64_t n = 0;
    for (const auto& [file, props] : tables) {
      n += static_cast<int64_t>(props->num_entries) - static_cast<int64_t>(props->num_deletions) -
           static_cast<int64_t>(props->num_range_deletions);
    }
    return n;
  }

  absl::StatusOr<ReadableRecordsReport> Walk(
      std::string_view name, std::vector<std::string> known,
      const std::function<void(std::string_view, std::string_view)>& fn) {
    ReadableRecordsOptions options;
    options.key_prefix = KeyPrefixOf(name);
    options.known_keys = std::move(known);
    options.expected_records = std::max<int64_t>(0, RecordsInFiles(name));
    return ReadReadableRecords(*db_, Family(name), options, fn);
  }

  // Writes the records `keep` accepts to an SST file, drops the family, creates it again and
  // ingests the file. `kept_keys` (optional) receives the keys written.
  absl::StatusOr<FamilyRebuild> Rebuild(std::string_view name, std::vector<std::string> known,
                                        const std::function<bool(std::string_view)>& keep,
                                        absl::flat_hash_set<std::string>* kept_keys) {
    const std::string family(name);
    FamilyRebuild result;
    result.family = family;
    const int64_t before = RecordsInFiles(name);
    const fs::path dir = fs::path(path_) / kRebuildDir;
    const fs::path tmp = dir / (family + ".sst.tmp");
    const fs::path file = dir / (family + ".sst");
    std::error_code ec;
    absl::StatusOr<fs_safety::Fd> made = OpenRebuildDir(path_, /*create=*/true);
    if (!made.ok()) {
      return absl::UnavailableError(
          absl::StrCat("cannot create '", dir.string(), "': ", made.status().message()));
    }
    rocksdb::SstFileWriter writer(rocksdb::EnvOptions(),
                                  rocksdb::Options(DbOptions(), FamilyOptions(family)));
    rocksdb::Status s = writer.Open(tmp.string());
    if (!s.ok()) return FromRocks(s, "cannot write the rebuilt records", tmp.string());
    absl::StatusOr<ReadableRecordsReport> read =
        Walk(name, std::move(known), [&](std::string_view key, std::string_view value) {
          if (!s.ok() || !keep(key)) return;
          s = writer.Put(rocksdb::Slice(key.data(), key.size()),
                         rocksdb::Slice(value.data(), value.size()));
          ++result.kept;
          if (kept_keys != nullptr) kept_keys->insert(std::string(key));
        });
    if (!read.ok()) return read.status();
    if (s.ok() && result.kept > 0) s = writer.Finish();  // syncs the file
    if (!s.ok()) return FromRocks(s, "cannot write the rebuilt records", tmp.string());
    result.damage = read->first_damage;
    result.lost = before < 0 ? -1 : std::max<int64_t>(0, before - result.kept);
    if (result.kept > 0) {
      fs::rename(tmp, file, ec);
      if (ec) {
        return absl::UnavailableError(
            absl::StrCat("cannot rename '", tmp.string(), "': ", ec.message()));
      }
      SyncDirectory(dir);
    } else {
      fs::remove(tmp, ec);
    }

    rocksdb::ColumnFamilyHandle*& handle = Family(name);
    s = db_->DropColumnFamily(handle);
    if (!s.ok()) return FromRocks(s, absl::StrCat("cannot drop the ", family, " records"), path_);
    db_->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
    handle = nullptr;
    s = db_->CreateColumnFamily(FamilyOptions(family), family, &handle);
    if (!s.ok()) {
      return FromRocks(s, absl::StrCat("cannot create the ", family, " records again"), path_);
    }
    if (result.kept > 0) {
      if (absl::Status st = Ingest(handle, file); !st.ok()) return st;
    }
    return result;
  }

  absl::Status Ingest(rocksdb::ColumnFamilyHandle* family, const fs::path& file) {
    rocksdb::IngestExternalFileOptions options;
    options.move_files = true;  // a hard link; RocksDB removes the original once it is in
    options.verify_checksums_before_ingest = true;
    rocksdb::Status s = db_->IngestExternalFile(family, {file.string()}, options);
    if (!s.ok()) return FromRocks(s, "cannot ingest the rebuilt records", file.string());
    std::error_code ec;
    fs::remove(file, ec);
    return absl::OkStatus();
  }

 private:
  std::string path_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

}  // namespace

absl::StatusOr<int> FinishInterruptedRebuild(
    rocksdb::DB& db, const std::vector<rocksdb::ColumnFamilyHandle*>& families,
    const std::string& path) {
  const fs::path dir = fs::path(path) / kRebuildDir;
  absl::StatusOr<fs_safety::Fd> opened = OpenRebuildDir(path, /*create=*/false);
  if (!opened.ok()) return 0;  // none, or one another user could have filled: not read
  int ingested = 0;
  for (const std::string& name : fs_safety::EntryNames(opened->get())) {
    const fs::path file = dir / name;
    if (file.extension() != ".sst") continue;  // an unfinished .tmp: its family was not dropped
    // Only a regular file this user made, that no other user could have changed.
    struct stat st = {};
    if (::fstatat(opened->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode) || !fs_safety::NotOwnedByThisUser(st, name).empty() ||
        !fs_safety::OthersCanChange(st, name).empty()) {
      continue;
    }
    rocksdb::ColumnFamilyHandle* family = nullptr;
    for (rocksdb::ColumnFamilyHandle* h : families) {
      if (h->GetName() == file.stem().string()) family = h;
    }
    if (family == nullptr) continue;
    rocksdb::IngestExternalFileOptions options;
    options.move_files = true;
    options.verify_checksums_before_ingest = true;
    rocksdb::Status s = db.IngestExternalFile(family, {file.string()}, options);
    if (!s.ok()) return FromRocks(s, "cannot ingest the rebuilt records", file.string());
    ++ingested;
  }
  RemoveRebuildDir(path);
  return ingested;
}

absl::StatusOr<std::vector<FamilyRebuild>> RebuildDamagedFamilies(const std::string& path) {
  Database d;
  if (absl::Status s = d.Open(path); !s.ok()) return s;
  if (absl::StatusOr<int> n = FinishInterruptedRebuild(d.db(), d.handles(), path); !n.ok()) {
    return n.status();
  }

  // The kernels the usage index names: seek targets past damage in the kernels family.
  std::vector<std::string> usage_keys;
  absl::StatusOr<ReadableRecordsReport> meta =
      d.Walk(kMetaFamily, {}, [&](std::string_view key, std::string_view) {
        if (key.starts_with(kUsagePrefix)) {
          usage_keys.emplace_back(key.substr(std::string_view(kUsagePrefix).size()));
        }
      });
  if (!meta.ok()) return meta.status();

  std::vector<FamilyRebuild> rebuilt;
  std::optional<absl::flat_hash_set<std::string>> kernels_kept;
  for (const char* name : kRecordFamilies) {
    const bool kernels = std::string_view(name) == kKernelsFamily;
    std::vector<std::string> known = kernels ? usage_keys : std::vector<std::string>();
    absl::StatusOr<ReadableRecordsReport> scan =
        d.Walk(name, known, [](std::string_view, std::string_view) {});
    if (!scan.ok()) return scan.status();
    if (scan->damaged_ranges == 0) continue;
    if (kernels) kernels_kept.emplace();
    absl::StatusOr<FamilyRebuild> r = d.Rebuild(
        name, std::move(known), [](std::string_view) { return true; },
        kernels ? &*kernels_kept : nullptr);
    if (!r.ok()) return r.status();
    rebuilt.push_back(*std::move(r));
  }

  // Usage entries of kernels that were lost go; "meta" itself is rebuilt if it is damaged.
  auto usage_of_lost_kernel = [&](std::string_view key) {
    if (!kernels_kept || !key.starts_with(kUsagePrefix)) return false;
    return !kernels_kept->contains(std::string(key.substr(std::string_view(kUsagePrefix).size())));
  };
  if (meta->damaged_ranges > 0) {
    absl::StatusOr<FamilyRebuild> r = d.Rebuild(
        kMetaFamily, {}, [&](std::string_view key) { return !usage_of_lost_kernel(key); }, nullptr);
    if (!r.ok()) return r.status();
    rebuilt.push_back(*std::move(r));
  } else if (kernels_kept) {
    rocksdb::WriteBatch batch;
    for (const std::string& kernel : usage_keys) {
      const std::string key = absl::StrCat(kUsagePrefix, kernel);
      if (usage_of_lost_kernel(key)) batch.Delete(d.Family(kMetaFamily), key);
    }
    rocksdb::WriteOptions sync;
    sync.sync = true;
    rocksdb::Status s = d.db().Write(sync, &batch);
    if (!s.ok()) return FromRocks(s, "cannot drop the usage of lost kernels", path);
  }
  RemoveRebuildDir(path);
  return rebuilt;
}

}  // namespace pto::cache
