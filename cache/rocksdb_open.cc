// Opening a RocksDbStore: the database in its role (with a repair when it is damaged), the
// column families, the schema check and the in-memory index of sizes and kernel usage.
#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cache/envelope.h"
#include "cache/fs_safety.h"
#include "cache/older_format.h"
#include "cache/open_recovery.h"
#include "cache/rebuild_families.h"
#include "cache/rocksdb_options.h"
#include "cache/rocksdb_store.h"
#include "cache/rocksdb_store_internal.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"

namespace pto::cache {
namespace {

constexpr char kSchemaKey[] = "schema";

// Info-log sink for a read-only base, whose directory may not be writable.
class NullLogger final : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

// The database options of `role`: a reader or read-only store creates nothing.
rocksdb::DBOptions DbOptionsFor(DbRole role) {
  rocksdb::DBOptions db_options = DbOptions();
  if (role != DbRole::kWriter) {
    db_options.create_if_missing = false;
    db_options.create_missing_column_families = false;
    db_options.max_open_files = -1;  // RocksDB requires it of a secondary instance
  }
  if (role == DbRole::kReadOnly) db_options.info_log = std::make_shared<NullLogger>();
  return db_options;
}

// The column families to open at `path`: for a reader or read-only store those the database
// has (an error if they cannot be listed); for the writer those and ours. Listing fails for a
// new database; then only ours are created. Families a later version added are opened too
// (RocksDB refuses to open a database without all of them).
absl::StatusOr<std::vector<rocksdb::ColumnFamilyDescriptor>> FamiliesToOpen(
    DbRole role, const rocksdb::DBOptions& db_options, const std::string& path) {
  std::vector<std::string> names;
  rocksdb::Status listed = rocksdb::DB::ListColumnFamilies(db_options, path, &names);
  if (role != DbRole::kWriter && !listed.ok()) {
    return FromRocks(listed, "cannot open the RocksDB database", path);
  }
  if (role == DbRole::kWriter) {
    if (!listed.ok()) names.clear();
    for (const char* name : {rocksdb::kDefaultColumnFamilyName.c_str(), kKernelsFamily,
                             kPlansFamily, kTuningFamily, kMetaFamily}) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> result;
  for (const std::string& name : names) result.emplace_back(name, FamilyOptions(name));
  return result;
}

}  // namespace

RocksDbStore::RocksDbStore(const CacheOptions& options, DbRole role)
    : CacheStore(options.clock_ms),
      role_(role),
      path_(options.path),
      capacity_bytes_(options.capacity_bytes),
      log_(options.log),
      created_by_(options.created_by),
      overlay_(std::make_unique<MemoryStore>(options)) {}

RocksDbStore::~RocksDbStore() {
  if (db_ != nullptr) {
    for (rocksdb::ColumnFamilyHandle* h : handles_) db_->DestroyColumnFamilyHandle(h);
    handles_.clear();
    db_->Close().PermitUncheckedError();
    db_.reset();
  }
  ReleaseRole();
}

absl::StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::Open(const CacheOptions& options,
                                                                 DbRole role) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("RocksDbStore::Open: CacheOptions.path is empty");
  }
  std::unique_ptr<RocksDbStore> store(new RocksDbStore(options, role));
  if (role == DbRole::kWriter) {
    if (absl::Status s = store->ClaimWriterRole(); !s.ok()) return s;
  }
  if (absl::Status s = store->OpenDatabase(); !s.ok()) return s;
  if (role == DbRole::kWriter) {
    if (absl::StatusOr<int> n =
            FinishInterruptedRebuild(*store->db_, store->handles_, options.path);
        !n.ok()) {
      store->Log(kLogWarning, absl::StrCat("pto cache: ", n.status().message()));
    }
  }
  if (absl::Status st = store->CheckSchema(); !st.ok()) return st;
  {
    std::lock_guard<std::mutex> lock(store->mu_);
    if (absl::Status st = store->LoadIndex(/*full_scan=*/store->repaired_); !st.ok()) return st;
  }
  if (!store->index_damage_.empty()) store->Log(kLogWarning, store->index_damage_);
  if (role == DbRole::kWriter) store->StartWriterRole();
  return store;
}

absl::Status RocksDbStore::OpenDatabase() {
  if (role_ == DbRole::kWriter) {
    // Like `mkdir -p` (~/.cache may not exist yet), with fixed modes; RocksDB itself creates
    // only the last level. Failures (a regular file in the way, no permission) surface from
    // DB::Open below.
    (void)fs_safety::MakeDirectories(path_);
  }
  table_options_ = std::make_unique<rocksdb::Options>(DbOptions(), FamilyOptions(kMetaFamily));
  const rocksdb::DBOptions db_options = DbOptionsFor(role_);
  absl::StatusOr<std::vector<rocksdb::ColumnFamilyDescriptor>> families =
      FamiliesToOpen(role_, db_options, path_);
  if (!families.ok()) return families.status();

  rocksdb::Status s;
  if (role_ == DbRole::kWriter) {
    if (std::optional<std::string> damage = DamageBeforeOpen(path_)) {
      s = rocksdb::Status::Corruption(*damage);
    }
  }
  if (s.ok()) s = OpenInRole(db_options, *families);
  if (role_ == DbRole::kWriter && IsRepairableDamage(s, path_)) {
    if (absl::Status repaired = RepairAndReopen(db_options, s, &*families); !repaired.ok()) {
      return repaired;
    }
    s = rocksdb::Status::OK();
  }
  if (!s.ok()) return FromRocks(s, "cannot open the RocksDB database", path_);
  return BindFamilies(*families);
}

rocksdb::Status RocksDbStore::OpenInRole(
    const rocksdb::DBOptions& db_options,
    const std::vector<rocksdb::ColumnFamilyDescriptor>& families) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s;
  switch (role_) {
    case DbRole::kWriter:
      s = rocksdb::DB::Open(db_options, path_, families, &handles_, &raw);
      break;
    case DbRole::kReader:
      // Its info log goes to a directory of its own, removed when the store closes.
      if (absl::Status dir = MakeReaderDir(); !dir.ok()) {
        return rocksdb::Status::IOError(std::string(dir.message()));
      }
      s = rocksdb::DB::OpenAsSecondary(db_options, path_, secondary_path_, families, &handles_,
                                       &raw);
      break;
    case DbRole::kReadOnly:
      s = rocksdb::DB::OpenForReadOnly(db_options, path_, families, &handles_, &raw);
      break;
  }
  if (s.ok()) db_.reset(raw);
  return s;
}

absl::Status RocksDbStore::RepairAndReopen(const rocksdb::DBOptions& db_options,
                                           const rocksdb::Status& damage,
                                           std::vector<rocksdb::ColumnFamilyDescriptor>* families) {
  // A cache may lose entries but should not be lost whole: RepairDB keeps every readable
  // table, moves the others to <path>/lost and writes a new MANIFEST. It takes the LOCK.
  rocksdb::Status repair =
      rocksdb::RepairDB(path_, db_options, *families, FamilyOptions(kKernelsFamily));
  if (!repair.ok()) {
    return absl::DataLossError(absl::StrCat("damaged (", damage.ToString(),
                                            ") and could not be repaired: ", repair.ToString()));
  }
  const std::string first_error = damage.ToString();
  absl::StatusOr<std::vector<rocksdb::ColumnFamilyDescriptor>> relisted =
      FamiliesToOpen(role_, db_options, path_);
  if (!relisted.ok()) return relisted.status();
  *families = std::move(*relisted);
  rocksdb::Status s = OpenInRole(db_options, *families);
  if (!s.ok()) {
    return FromRocks(s, absl::StrCat("damaged (", first_error, "); repaired but cannot reopen"),
                     path_);
  }
  repaired_ = true;
  Log(kLogWarning,
      absl::StrCat("pto cache: the cache database at '", path_, "' was damaged (", first_error,
                   "); repaired it, unreadable files are in its lost/ directory: "
                   "kernels stored in them will be recompiled"));
  return absl::OkStatus();
}

absl::Status RocksDbStore::BindFamilies(
    const std::vector<rocksdb::ColumnFamilyDescriptor>& families) {
  for (size_t i = 0; i < families.size(); ++i) {
    const std::string& name = families[i].name;
    if (name == kKernelsFamily) kernels_ = handles_[i];
    if (name == kPlansFamily) plans_ = handles_[i];
    if (name == kTuningFamily) tuning_ = handles_[i];
    if (name == kMetaFamily) meta_ = handles_[i];
  }
  if (kernels_ == nullptr || plans_ == nullptr || tuning_ == nullptr || meta_ == nullptr) {
    if (role_ == DbRole::kReader) {
      // The writer creates the database and then its families: a reader may look in between.
      return absl::UnavailableError(
          absl::StrCat("the cache database at '", path_, "' is still being created by its writer"));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("'", path_,
                     "' is a RocksDB database but not a pto cache (no kernels, plans, "
                     "tuning and meta column families)"));
  }
  return absl::OkStatus();
}

absl::Status RocksDbStore::CheckSchema() {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), meta_, kSchemaKey, &value);
  if (s.ok()) {
    std::optional<std::string> payload = UnwrapPayload(value);
    proto::CacheMeta meta;
    if (payload && meta.ParseFromString(*payload)) {
      if (meta.schema_version() == kSchemaVersion) return absl::OkStatus();
      return absl::FailedPreconditionError(absl::StrCat(
          "the database has cache schema version ", meta.schema_version(), " (written by '",
          meta.created_by(), "'); this pto reads version ", kSchemaVersion));
    }
    const bool older = IsValueFormat1(value);
    if (older && role_ == DbRole::kReadOnly) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", path_, "' was written by an older pto in value format 1; this pto reads format ",
          kValueFormatVersion));
    }
    if (role_ != DbRole::kWriter) return absl::OkStatus();  // the writer rewrites it
    if (older) {
      s = DropRecordsOfOlderFormat(*db_, {kernels_, plans_, tuning_}, meta_);
      if (!s.ok()) return FromRocks(s, "cannot drop the records of an older format", path_);
      Log(kLogWarning, absl::StrCat("pto cache: the cache database at '", path_,
                                    "' was written by an older pto in value format 1, which this "
                                    "pto does not read; dropped its records (kernels are compiled "
                                    "and stored again as they are needed)"));
    } else {
      Log(kLogWarning,
          absl::StrCat("pto cache: the meta record of '", path_, "' is unreadable; rewriting it"));
    }
  } else if (!s.IsNotFound() && !s.IsCorruption()) {
    return FromRocks(s, "cannot read the cache's meta record", path_);
  } else if (role_ != DbRole::kWriter) {
    // A writer that has just created the database writes it; a base must have it.
    if (role_ == DbRole::kReader) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("'", path_, "' has no pto cache meta record (not a pto cache database)"));
  }
  return WriteSchemaRecord();
}

absl::Status RocksDbStore::WriteSchemaRecord() {
  proto::CacheMeta meta;
  meta.set_schema_version(kSchemaVersion);
  meta.set_created_by(created_by_);
  rocksdb::WriteOptions sync = WriteOpts();
  sync.sync = true;  // once per database
  rocksdb::Status s = db_->Put(sync, meta_, kSchemaKey, WrapPayload(meta.SerializeAsString()));
  if (!s.ok()) return FromRocks(s, "cannot write the cache's meta record", path_);
  return absl::OkStatus();
}

absl::Status RocksDbStore::LoadIndex(bool full_scan) {
  lru_.Clear();
  plan_sizes_.clear();
  tuning_sizes_.clear();
  const int64_t now = NowMs();
  rocksdb::WriteBatch fixes;
  absl::flat_hash_map<std::string, LruIndex::Usage> usage = ReadUsageEntries(&fixes);
  if (full_scan) {
    ReconcileUsageWithKernels(usage, now, &fixes);
  } else {
    for (const auto& [key, u] : usage) lru_.Upsert(key, u);
  }
  CountSmallRecords();
  if (fixes.Count() > 0 && role_ == DbRole::kWriter) {
    rocksdb::WriteOptions wo = WriteOpts();
    rocksdb::Status s = db_->Write(wo, &fixes);
    if (!s.ok()) return FromRocks(s, "cannot update the LRU index", path_);
  }
  return absl::OkStatus();
}

absl::flat_hash_map<std::string, LruIndex::Usage> RocksDbStore::ReadUsageEntries(
    rocksdb::WriteBatch* fixes) {
  absl::flat_hash_map<std::string, LruIndex::Usage> usage;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), meta_));
  for (it->Seek(kUsagePrefix); it->Valid() && it->key().starts_with(kUsagePrefix); it->Next()) {
    std::string key = it->key().ToString().substr(sizeof(kUsagePrefix) - 1);
    std::optional<LruIndex::Usage> u = DecodeUsage(it->value().ToStringView());
    if (u) {
      usage.emplace(std::move(key), *u);
    } else {
      fixes->Delete(meta_, it->key());
    }
  }
  if (!it->status().ok()) {
    Log(kLogWarning, absl::StrCat("pto cache: reading the LRU index of '", path_,
                                  "' stopped early: ", it->status().ToString()));
  }
  return usage;
}

void RocksDbStore::ReconcileUsageWithKernels(
    const absl::flat_hash_map<std::string, LruIndex::Usage>& usage, int64_t now,
    rocksdb::WriteBatch* fixes) {
  absl::flat_hash_map<std::string, int64_t> present;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), kernels_));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    present.emplace(it->key().ToString(), static_cast<int64_t>(it->value().size()));
  }
  for (const auto& [key, u] : usage) {
    if (!present.contains(key)) fixes->Delete(meta_, UsageKey(key));
  }
  for (const auto& [key, size] : present) {
    auto u = usage.find(key);
    LruIndex::Usage entry{size, now, 0};
    if (u != usage.end()) entry = {size, u->second.last_used_unix_ms, u->second.hits};
    lru_.Upsert(key, entry);
    if (u == usage.end() || u->second.size_bytes != size) {
      fixes->Put(meta_, UsageKey(key), EncodeUsage(entry));
    }
  }
}

void RocksDbStore::CountSmallRecords() {
  for (auto [family, sizes] :
       {std::pair{plans_, &plan_sizes_}, std::pair{tuning_, &tuning_sizes_}}) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), family));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      sizes->emplace(it->key().ToString(), static_cast<int64_t>(it->value().size()));
    }
    if (it->status().IsCorruption() && index_damage_.empty()) {
      index_damage_ = absl::StrCat(
          "pto cache: the ", family->GetName(), " records of '", path_,
          "' cannot be read past a damaged block (", it->status().ToString(),
          "); `pto cache verify --repair` rebuilds them from the records still readable");
    }
  }
}

}  // namespace pto::cache
