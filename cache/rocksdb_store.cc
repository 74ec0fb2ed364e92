#include "cache/rocksdb_store.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cache/add_operator.h"
#include "cache/envelope.h"
#include "cache/fs_safety.h"
#include "cache/inbox.h"
#include "cache/older_format.h"
#include "cache/open_recovery.h"
#include "cache/readable_records.h"
#include "cache/reader_dirs.h"
#include "cache/rebuild_families.h"
#include "cache/rocksdb_options.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/metadata.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"

namespace pto::cache {
namespace {

constexpr char kSchemaKey[] = "schema";
constexpr char kCounterPrefix[] = "count/";
constexpr const char* kCounterNames[] = {"hits", "misses", "corrupt", "puts", "compiles"};
constexpr int kCounters = 5;

// Info-log sink for a read-only base, whose directory may not be writable.
class NullLogger final : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

// Paths this process holds as writer: RocksDB refuses a second open of a path in one process,
// and each failed DB::Open rotates the holder's info log, so callers check here first.
std::mutex& WritersMutex() {
  static std::mutex mu;
  return mu;
}
absl::flat_hash_set<std::string>& WriterPaths() {
  static auto* paths = new absl::flat_hash_set<std::string>();
  return *paths;
}
std::string CanonicalPath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

int64_t* CounterField(CacheStats& s, int i) {
  int64_t* fields[] = {&s.hits, &s.misses, &s.corrupt, &s.puts, &s.kernel_puts};
  return fields[i];
}

const char* FamilyName(RecordKind kind) {
  switch (kind) {
    case RecordKind::kKernel:
      return kKernelsFamily;
    case RecordKind::kPlan:
      return kPlansFamily;
    case RecordKind::kTuning:
      break;
  }
  return kTuningFamily;
}

rocksdb::WriteOptions WriteOpts() {
  rocksdb::WriteOptions o;
  o.sync = false;        // acknowledged = in the WAL in the OS page cache (see the header)
  o.disableWAL = false;  // the default; the WAL is what makes an acknowledged write survive
  return o;
}

absl::Status FromRocks(const rocksdb::Status& s, std::string_view what, const std::string& path) {
  std::string message = absl::StrCat(std::string(what), " (", path, "): ", s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsIOError() || s.IsBusy() || s.IsTimedOut() || s.IsTryAgain() || s.IsInvalidArgument() ||
      s.IsNotSupported() || s.IsIncomplete() || s.IsAborted() || s.IsShutdownInProgress()) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

std::string UsageKey(std::string_view key) { return absl::StrCat(kUsagePrefix, std::string(key)); }

std::string EncodeUsage(const LruIndex::Usage& u) {
  proto::KernelUsage usage;
  usage.set_size_bytes(u.size_bytes);
  usage.set_last_used_unix_ms(u.last_used_unix_ms);
  usage.set_hits(u.hits);
  return WrapPayload(usage.SerializeAsString());
}

std::optional<LruIndex::Usage> DecodeUsage(std::string_view value) {
  std::optional<std::string> payload = UnwrapPayload(value);
  proto::KernelUsage usage;
  if (!payload || !usage.ParseFromString(*payload)) return std::nullopt;
  return LruIndex::Usage{usage.size_bytes(), usage.last_used_unix_ms(), usage.hits()};
}

// The SST file number RocksDB names in an error ("... in /db/000012.sst offset ..."), or 0.
uint64_t SstNumberIn(std::string_view error) {
  size_t end = error.rfind(".sst");
  if (end == std::string_view::npos) return 0;
  size_t begin = end;
  while (begin > 0 && error[begin - 1] >= '0' && error[begin - 1] <= '9') --begin;
  uint64_t n = 0;
  for (size_t i = begin; i < end; ++i) n = n * 10 + static_cast<uint64_t>(error[i] - '0');
  return n;
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
  if (registered_writer_) {
    std::lock_guard<std::mutex> lock(WritersMutex());
    WriterPaths().erase(CanonicalPath(path_));
  }
  if (!secondary_path_.empty()) reader_dirs::Remove(path_, secondary_path_);
}

bool RocksDbStore::WriterOpenInThisProcess(const std::string& path) {
  std::lock_guard<std::mutex> lock(WritersMutex());
  return WriterPaths().contains(CanonicalPath(path));
}

std::string RocksDbStore::Role() const {
  switch (role_) {
    case DbRole::kWriter:
      return "writer";
    case DbRole::kReader:
      return "reader";
    case DbRole::kReadOnly:
      break;
  }
  return "read-only";
}

std::string RocksDbStore::Describe() const {
  std::string d = absl::StrCat("rocksdb:", path_, " (", Role(), ")");
  if (degraded_.load()) absl::StrAppend(&d, " (writes fail; new records in memory)");
  return d;
}

void RocksDbStore::Degrade(const absl::Status& write_error) {
  if (degraded_.exchange(true)) return;
  Log(kLogWarning, absl::StrCat("pto cache: cannot write to the cache database at '", path_,
                                "': ", write_error.message(),
                                "; new records are kept in memory only from now on"));
}

void RocksDbStore::Log(int level, const std::string& message) const {
  if (log_) log_(level, message);
}

rocksdb::ColumnFamilyHandle* RocksDbStore::Family(RecordKind kind) const {
  switch (kind) {
    case RecordKind::kKernel:
      return kernels_;
    case RecordKind::kPlan:
      return plans_;
    case RecordKind::kTuning:
      break;
  }
  return tuning_;
}

absl::StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::Open(const CacheOptions& options,
                                                                 DbRole role) {
  if (options.path.empty()) {
    return absl::InvalidArgumentError("RocksDbStore::Open: CacheOptions.path is empty");
  }
  std::unique_ptr<RocksDbStore> store(new RocksDbStore(options, role));
  if (role == DbRole::kWriter) {
    // Registered before RocksDB takes the LOCK: from then on no thread of this process may
    // probe the LOCK file (closing any descriptor of it would drop this process's fcntl lock).
    std::lock_guard<std::mutex> lock(WritersMutex());
    if (!WriterPaths().insert(CanonicalPath(options.path)).second) {
      return absl::UnavailableError(absl::StrCat("cannot open the RocksDB database (", options.path,
                                                 "): its lock is held by this process"));
    }
    store->registered_writer_ = true;
  }
  if (absl::Status s = store->OpenDatabase(options); !s.ok()) return s;
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
  if (role == DbRole::kWriter) {
    // Batches left by readers (also by readers that have exited) are ingested at once.
    inbox::RemoveAbandonedTemporaries(options.path);
    if (absl::StatusOr<int> n = store->IngestInbox(); !n.ok()) {
      store->Log(kLogWarning, std::string(n.status().message()));
    }
  }
  return store;
}

absl::Status RocksDbStore::OpenDatabase(const CacheOptions& options) {
  if (role_ == DbRole::kWriter) {
    // Like `mkdir -p` (~/.cache may not exist yet), with fixed modes; RocksDB itself creates
    // only the last level. Failures (a regular file in the way, no permission) surface from
    // DB::Open below.
    (void)fs_safety::MakeDirectories(options.path);
  }
  rocksdb::DBOptions db_options = DbOptions();
  table_options_ = std::make_unique<rocksdb::Options>(db_options, FamilyOptions(kMetaFamily));
  if (role_ != DbRole::kWriter) {
    db_options.create_if_missing = false;
    db_options.create_missing_column_families = false;
    db_options.max_open_files = -1;  // RocksDB requires it of a secondary instance
  }
  if (role_ == DbRole::kReadOnly) db_options.info_log = std::make_shared<NullLogger>();

  std::vector<std::string> names;
  rocksdb::Status listed = rocksdb::DB::ListColumnFamilies(db_options, options.path, &names);
  if (role_ != DbRole::kWriter && !listed.ok()) {
    return FromRocks(listed, "cannot open the RocksDB database", options.path);
  }
  auto descriptors = [&]() {
    // Fails for a new database; then only ours are created. Families a later version added
    // are opened too (RocksDB refuses to open a database without all of them).
    if (role_ == DbRole::kWriter) {
      names.clear();
      rocksdb::DB::ListColumnFamilies(db_options, options.path, &names).PermitUncheckedError();
      for (const char* name : {rocksdb::kDefaultColumnFamilyName.c_str(), kKernelsFamily,
                               kPlansFamily, kTuningFamily, kMetaFamily}) {
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    }
    std::vector<rocksdb::ColumnFamilyDescriptor> result;
    for (const std::string& name : names) result.emplace_back(name, FamilyOptions(name));
    return result;
  };
  auto open = [&](const std::vector<rocksdb::ColumnFamilyDescriptor>& families) {
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s;
    switch (role_) {
      case DbRole::kWriter:
        s = rocksdb::DB::Open(db_options, options.path, families, &handles_, &raw);
        break;
      case DbRole::kReader: {
        // Its info log goes to a directory of its own, removed when the store closes.
        absl::StatusOr<std::string> dir = reader_dirs::Make(options.path);
        if (!dir.ok()) return rocksdb::Status::IOError(std::string(dir.status().message()));
        secondary_path_ = *dir;
        s = rocksdb::DB::OpenAsSecondary(db_options, options.path, secondary_path_, families,
                                         &handles_, &raw);
        break;
      }
      case DbRole::kReadOnly:
        s = rocksdb::DB::OpenForReadOnly(db_options, options.path, families, &handles_, &raw);
        break;
    }
    if (s.ok()) db_.reset(raw);
    return s;
  };

  std::vector<rocksdb::ColumnFamilyDescriptor> families = descriptors();
  rocksdb::Status s;
  if (role_ == DbRole::kWriter) {
    if (std::optional<std::string> damage = DamageBeforeOpen(options.path)) {
      s = rocksdb::Status::Corruption(*damage);
    }
  }
  if (s.ok()) s = open(families);
  if (role_ == DbRole::kWriter && IsRepairableDamage(s, options.path)) {
    // A cache may lose entries but should not be lost whole: RepairDB keeps every readable
    // table, moves the others to <path>/lost and writes a new MANIFEST. It takes the LOCK.
    rocksdb::Status repair =
        rocksdb::RepairDB(options.path, db_options, families, FamilyOptions(kKernelsFamily));
    if (!repair.ok()) {
      return absl::DataLossError(absl::StrCat("damaged (", s.ToString(),
                                              ") and could not be repaired: ", repair.ToString()));
    }
    const std::string first_error = s.ToString();
    families = descriptors();
    s = open(families);
    if (!s.ok()) {
      return FromRocks(s, absl::StrCat("damaged (", first_error, "); repaired but cannot reopen"),
                       options.path);
    }
    repaired_ = true;
    Log(kLogWarning, absl::StrCat("pto cache: the cache database at '", options.path,
                                  "' was damaged (", first_error,
                                  "); repaired it, unreadable files are in its lost/ directory: "
                                  "kernels stored in them will be recompiled"));
  }
  if (!s.ok()) return FromRocks(s, "cannot open the RocksDB database", options.path);

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
      return absl::UnavailableError(absl::StrCat("the cache database at '", options.path,
                                                 "' is still being created by its writer"));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("'", options.path,
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
  proto::CacheMeta meta;
  meta.set_schema_version(kSchemaVersion);
  meta.set_created_by(created_by_);
  rocksdb::WriteOptions sync = WriteOpts();
  sync.sync = true;  // once per database
  s = db_->Put(sync, meta_, kSchemaKey, WrapPayload(meta.SerializeAsString()));
  if (!s.ok()) return FromRocks(s, "cannot write the cache's meta record", path_);
  return absl::OkStatus();
}

absl::Status RocksDbStore::LoadIndex(bool full_scan) {
  lru_.Clear();
  plan_sizes_.clear();
  tuning_sizes_.clear();
  const int64_t now = NowMs();
  rocksdb::WriteBatch fixes;

  // Persisted usage of kernels.
  absl::flat_hash_map<std::string, LruIndex::Usage> usage;
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), meta_));
    for (it->Seek(kUsagePrefix); it->Valid() && it->key().starts_with(kUsagePrefix); it->Next()) {
      std::string key = it->key().ToString().substr(sizeof(kUsagePrefix) - 1);
      std::optional<LruIndex::Usage> u = DecodeUsage(it->value().ToStringView());
      if (u) {
        usage.emplace(std::move(key), *u);
      } else {
        fixes.Delete(meta_, it->key());
      }
    }
    if (!it->status().ok()) {
      Log(kLogWarning, absl::StrCat("pto cache: reading the LRU index of '", path_,
                                    "' stopped early: ", it->status().ToString()));
    }
  }

  if (full_scan) {
    // Reconcile with the kernels really present (after a repair or a dropped SST file).
    absl::flat_hash_map<std::string, int64_t> present;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), kernels_));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      present.emplace(it->key().ToString(), static_cast<int64_t>(it->value().size()));
    }
    for (const auto& [key, u] : usage) {
      if (!present.contains(key)) fixes.Delete(meta_, UsageKey(key));
    }
    for (const auto& [key, size] : present) {
      auto u = usage.find(key);
      LruIndex::Usage entry{size, now, 0};
      if (u != usage.end()) entry = {size, u->second.last_used_unix_ms, u->second.hits};
      lru_.Upsert(key, entry);
      if (u == usage.end() || u->second.size_bytes != size) {
        fixes.Put(meta_, UsageKey(key), EncodeUsage(entry));
      }
    }
  } else {
    for (const auto& [key, u] : usage) lru_.Upsert(key, u);
  }

  // Plans and tuning records are small: count them directly.
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
  if (fixes.Count() > 0 && role_ == DbRole::kWriter) {
    rocksdb::WriteOptions wo = WriteOpts();
    rocksdb::Status s = db_->Write(wo, &fixes);
    if (!s.ok()) return FromRocks(s, "cannot update the LRU index", path_);
  }
  return absl::OkStatus();
}

absl::StatusOr<CacheStore::Loaded> RocksDbStore::Load(RecordKind kind, const std::string& key) {
  if (degraded_.load() || role_ == DbRole::kReader) {
    absl::StatusOr<Loaded> in_memory = overlay_->Load(kind, key);
    if (!in_memory.ok() || in_memory->state != Loaded::State::kMiss) return in_memory;
  }
  if (role_ == DbRole::kReader) {
    std::lock_guard<std::mutex> lock(mu_);
    if (erased_.contains(key)) return Loaded();
  }
  Loaded loaded;
  std::string value;
  rocksdb::ReadOptions read;
  read.verify_checksums = true;
  rocksdb::Status s = db_->Get(read, Family(kind), key, &value);
  if (s.IsNotFound() && role_ == DbRole::kReader) {
    // The writer may have it already (in its WAL, or ingested from another reader's batch),
    // or it may still wait in the inbox.
    if (TryCatchUp().ok()) s = db_->Get(read, Family(kind), key, &value);
    if (s.IsNotFound()) {
      if (std::optional<std::string> v =
              inbox::Lookup(path_, FamilyName(kind), key, *table_options_)) {
        value = std::move(*v);
        s = rocksdb::Status::OK();
      } else if (TryCatchUp().ok()) {
        // A batch leaves the inbox only after its ingestion is in the MANIFEST: if it left
        // between the two looks, catching up again finds it.
        s = db_->Get(read, Family(kind), key, &value);
      }
    }
  }
  if (s.IsNotFound()) {
    if (kind == RecordKind::kKernel && role_ == DbRole::kWriter) {
      std::lock_guard<std::mutex> lock(mu_);
      if (lru_.Find(key)) {  // usage outlived its record (e.g. a dropped SST file)
        lru_.Remove(key);
        db_->Delete(WriteOpts(), meta_, UsageKey(key)).PermitUncheckedError();
      }
    }
    return loaded;
  }
  if (s.IsCorruption()) {
    HandleReadCorruption(kind, key, s.ToString());
    loaded.state = Loaded::State::kCorrupt;
    return loaded;
  }
  if (!s.ok()) {
    return FromRocks(s, absl::StrCat("cannot read ", RecordKindName(kind), " ", key), path_);
  }
  std::optional<std::string> payload = UnwrapPayload(value);
  if (!payload) {
    loaded.state = Loaded::State::kCorrupt;
    return loaded;
  }
  loaded.state = Loaded::State::kHit;
  loaded.payload = std::move(*payload);
  if (kind == RecordKind::kKernel && role_ != DbRole::kReadOnly) {
    const int64_t now = NowMs();
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<LruIndex::Usage> usage = lru_.Touch(key, now);
    if (!usage) {
      // No usage entry (lost with a repair, or a racing eviction; the latter is corrected when
      // the key is next found missing; for a reader, the writer has not ingested it yet).
      usage = LruIndex::Usage{static_cast<int64_t>(value.size()), now, 1};
      lru_.Upsert(key, *usage);
    }
    loaded.last_used_unix_ms = usage->last_used_unix_ms;
    loaded.hits = usage->hits;
    if (role_ == DbRole::kReader) {
      pending_usage_[key] = *usage;  // handed to the writer in batches
    } else if (!degraded_.load()) {
      // One small WAL append per kernel load (loads happen when plans are built, not per call).
      db_->Put(WriteOpts(), meta_, UsageKey(key), EncodeUsage(*usage)).PermitUncheckedError();
    }
  }
  return loaded;
}

void RocksDbStore::HandleReadCorruption(RecordKind kind, const std::string& key,
                                        const std::string& error) {
  Log(kLogWarning,
      absl::StrCat("pto cache: corrupt data in '", path_, "' reading ", RecordKindName(kind), " ",
                   key, ": ", error, "; treating it as a miss"));
  if (role_ != DbRole::kWriter) return;  // only the writer may change the database's files
  // Drop the damaged table: its entries are only cache entries, and leaving it would make
  // every later compaction that reads it fail (which stops writes).
  const uint64_t number = SstNumberIn(error);
  std::vector<rocksdb::LiveFileMetaData> files;
  db_->GetLiveFilesMetaData(&files);
  bool dropped = false;
  for (const rocksdb::LiveFileMetaData& f : files) {
    const bool named = number != 0 && f.file_number == number;
    const bool covers = number == 0 && f.column_family_name == FamilyName(kind) &&
                        f.smallestkey <= key && key <= f.largestkey;
    if (!named && !covers) continue;
    // Records of the file that still read back (their blocks are intact) are written again
    // before the file is dropped: only what is damaged is lost.
    rocksdb::WriteBatch salvage;
    rocksdb::ColumnFamilyHandle* family = nullptr;
    std::vector<std::string> candidates;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (f.column_family_name == kKernelsFamily) {
        family = kernels_;
        candidates = lru_.Keys();
      } else if (f.column_family_name == kPlansFamily || f.column_family_name == kTuningFamily) {
        const bool plans = f.column_family_name == kPlansFamily;
        family = plans ? plans_ : tuning_;
        for (const auto& [k, size] : plans ? plan_sizes_ : tuning_sizes_) candidates.push_back(k);
      } else if (f.column_family_name == kMetaFamily) {
        family = meta_;
      }
    }
    // The file's keys are found past its damaged blocks by seeking (readable_records.h),
    // those the index knows included; they are written again before the file is dropped.
    rocksdb::Status s;
    if (family != nullptr) {
      ReadableRecordsOptions range;
      range.key_prefix = KeyPrefixOf(f.column_family_name);
      range.lower = f.smallestkey;
      range.upper = f.largestkey;
      range.known_keys = std::move(candidates);
      range.expected_records = static_cast<int64_t>(f.num_entries);
      absl::StatusOr<ReadableRecordsReport> read =
          ReadReadableRecords(*db_, family, range, [&](std::string_view k, std::string_view value) {
            salvage
                .Put(family, rocksdb::Slice(k.data(), k.size()),
                     rocksdb::Slice(value.data(), value.size()))
                .PermitUncheckedError();
          });
      if (!read.ok()) Log(kLogWarning, std::string(read.status().message()));
      if (salvage.Count() > 0) s = db_->Write(WriteOpts(), &salvage);
    }
    if (s.ok()) s = db_->DeleteFile(f.relative_filename);
    if (s.ok()) {
      dropped = true;
      Log(kLogWarning, absl::StrCat("pto cache: dropped the damaged file ", f.relative_filename,
                                    " of '", path_, "' (", f.num_entries, " cached records, ",
                                    salvage.Count(), " of them intact and written again)"));
    } else {
      Log(kLogWarning,
          absl::StrCat("pto cache: could not drop the damaged file ", f.relative_filename, " of '",
                       path_, "': ", s.ToString(),
                       "; reads of its records are misses, and compactions reading it fail until "
                       "the database is repaired"));
    }
  }
  if (dropped) {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::Status st = LoadIndex(/*full_scan=*/true); !st.ok()) {
      Log(kLogWarning, std::string(st.message()));
    }
  }
}

absl::Status RocksDbStore::Store(RecordKind kind, const std::string& key, std::string payload) {
  if (role_ == DbRole::kReadOnly) {
    return absl::FailedPreconditionError(
        absl::StrCat("the cache database at '", path_, "' is opened read-only"));
  }
  if (degraded_.load()) return overlay_->Store(kind, key, std::move(payload));
  if (role_ == DbRole::kReader) {
    const std::string value = WrapPayload(payload);
    inbox::Batch batch;
    batch[FamilyName(kind)].push_back({inbox::Entry::Op::kPut, key, value});
    if (kind == RecordKind::kKernel) {
      const LruIndex::Usage usage{static_cast<int64_t>(value.size()), NowMs(), 0};
      batch[kMetaFamily].push_back({inbox::Entry::Op::kPut, UsageKey(key), EncodeUsage(usage)});
    }
    absl::Status s = HandOver(batch);
    {
      std::lock_guard<std::mutex> lock(mu_);
      erased_.erase(key);
    }
    // Read from memory until the writer has it (and for good if the inbox failed).
    absl::Status kept = overlay_->Store(kind, key, std::move(payload));
    return s.ok() ? kept : absl::OkStatus();
  }
  absl::Status s = StoreInDb(kind, key, payload);
  if (s.ok() || s.code() == absl::StatusCode::kInvalidArgument) return s;
  Degrade(s);
  return overlay_->Store(kind, key, std::move(payload));
}

absl::Status RocksDbStore::HandOver(const inbox::Batch& batch) {
  absl::Status s = inbox::WriteBatch(path_, batch, *table_options_);
  if (!s.ok()) Degrade(s);
  return s;
}

absl::Status RocksDbStore::StoreInDb(RecordKind kind, const std::string& key,
                                     const std::string& payload) {
  const std::string value = WrapPayload(payload);
  const int64_t size = static_cast<int64_t>(value.size());
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  rocksdb::WriteBatch batch;
  if (kind == RecordKind::kKernel && size > capacity_bytes_) {
    // Larger than the whole capacity: not kept (and the others are not flushed for it).
    batch.Delete(kernels_, key);
    batch.Delete(meta_, UsageKey(key));
    rocksdb::Status s = db_->Write(WriteOpts(), &batch);
    if (!s.ok()) return FromRocks(s, absl::StrCat("cannot delete kernel ", key), path_);
    lru_.Remove(key);
    ++evictions_;
    return absl::OkStatus();
  }
  batch.Put(Family(kind), key, value);
  const LruIndex::Usage usage{size, now, 0};
  if (kind == RecordKind::kKernel) batch.Put(meta_, UsageKey(key), EncodeUsage(usage));
  rocksdb::Status s = db_->Write(WriteOpts(), &batch);
  if (!s.ok()) {
    return FromRocks(s, absl::StrCat("cannot write ", RecordKindName(kind), " ", key), path_);
  }
  switch (kind) {
    case RecordKind::kKernel:
      lru_.Upsert(key, usage);
      break;
    case RecordKind::kPlan:
      plan_sizes_[key] = size;
      break;
    case RecordKind::kTuning:
      tuning_sizes_[key] = size;
      break;
  }
  if (kind != RecordKind::kKernel) return absl::OkStatus();
  return EvictLocked(lru_.Victims(capacity_bytes_));
}

absl::Status RocksDbStore::EvictLocked(const std::vector<std::string>& victims) {
  if (victims.empty()) return absl::OkStatus();
  if (role_ == DbRole::kReader) {
    inbox::Batch batch;
    for (const std::string& victim : victims) {
      batch[kKernelsFamily].push_back({inbox::Entry::Op::kDelete, victim, ""});
      batch[kMetaFamily].push_back({inbox::Entry::Op::kDelete, UsageKey(victim), ""});
    }
    if (absl::Status s = inbox::WriteBatch(path_, batch, *table_options_); !s.ok()) return s;
    for (const std::string& victim : victims) erased_.insert(victim);
  } else {
    rocksdb::WriteBatch evict;
    for (const std::string& victim : victims) {
      evict.Delete(kernels_, victim);
      evict.Delete(meta_, UsageKey(victim));
    }
    rocksdb::Status s = db_->Write(WriteOpts(), &evict);
    if (!s.ok()) return FromRocks(s, "cannot evict kernels", path_);
  }
  for (const std::string& victim : victims) lru_.Remove(victim);
  evictions_ += static_cast<int64_t>(victims.size());
  return absl::OkStatus();
}

absl::StatusOr<int64_t> RocksDbStore::EvictTo(int64_t kernel_bytes) {
  if (degraded_.load() || role_ == DbRole::kReadOnly) {
    return absl::FailedPreconditionError(
        absl::StrCat("the cache database at '", path_, "' does not take writes"));
  }
  if (role_ == DbRole::kReader) {
    if (absl::Status s = CatchUp(); !s.ok()) return s;
  }
  std::lock_guard<std::mutex> lock(mu_);
  const std::vector<std::string> victims = lru_.Victims(kernel_bytes);
  if (absl::Status s = EvictLocked(victims); !s.ok()) return s;
  return static_cast<int64_t>(victims.size());
}

absl::Status RocksDbStore::ScanRaw(RecordKind kind, const std::function<void(ScannedRecord&)>& fn) {
  if (role_ == DbRole::kReader) (void)CatchUp();
  rocksdb::ReadOptions read;
  read.verify_checksums = true;
  read.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read, Family(kind)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ScannedRecord r;
    r.kind = kind;
    r.key = it->key().ToString();
    r.stored_bytes = static_cast<int64_t>(it->value().size());
    if (absl::StatusOr<std::string_view> payload = UnwrapValue(it->value().ToStringView());
        payload.ok()) {
      r.payload = std::string(*payload);
    } else {
      r.problem = std::string(payload.status().message());
    }
    if (kind == RecordKind::kKernel) {
      std::lock_guard<std::mutex> lock(mu_);
      if (std::optional<LruIndex::Usage> u = lru_.Find(r.key)) {
        r.last_used_unix_ms = u->last_used_unix_ms;
        r.hits = u->hits;
      }
    }
    fn(r);
  }
  if (!it->status().ok()) {
    return FromRocks(it->status(), absl::StrCat("scanning the ", FamilyName(kind), " records"),
                     path_);
  }
  return absl::OkStatus();
}

absl::Status RocksDbStore::Erase(RecordKind kind, const std::string& key) {
  if (role_ == DbRole::kReadOnly) return absl::OkStatus();  // a base is never changed
  if (degraded_.load() || role_ == DbRole::kReader) (void)overlay_->Erase(kind, key);
  std::lock_guard<std::mutex> lock(mu_);
  if (role_ == DbRole::kReader) {
    if (degraded_.load()) return absl::OkStatus();
    inbox::Batch batch;
    batch[FamilyName(kind)].push_back({inbox::Entry::Op::kDelete, key, ""});
    if (kind == RecordKind::kKernel) {
      batch[kMetaFamily].push_back({inbox::Entry::Op::kDelete, UsageKey(key), ""});
    }
    if (absl::Status s = inbox::WriteBatch(path_, batch, *table_options_); !s.ok()) return s;
    erased_.insert(key);
  } else {
    rocksdb::WriteBatch batch;
    batch.Delete(Family(kind), key);
    if (kind == RecordKind::kKernel) batch.Delete(meta_, UsageKey(key));
    rocksdb::Status s = db_->Write(WriteOpts(), &batch);
    if (!s.ok()) {
      return FromRocks(s, absl::StrCat("cannot delete ", RecordKindName(kind), " ", key), path_);
    }
  }
  switch (kind) {
    case RecordKind::kKernel:
      lru_.Remove(key);
      break;
    case RecordKind::kPlan:
      plan_sizes_.erase(key);
      break;
    case RecordKind::kTuning:
      tuning_sizes_.erase(key);
      break;
  }
  return absl::OkStatus();
}

CacheStore::StoreCounts RocksDbStore::Counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  StoreCounts c;
  c.evictions = evictions_;
  c.kernel_bytes = lru_.total_bytes();
  c.entries = lru_.size() + static_cast<int64_t>(plan_sizes_.size() + tuning_sizes_.size());
  c.bytes = c.kernel_bytes;
  for (const auto& [key, size] : plan_sizes_) c.bytes += size;
  for (const auto& [key, size] : tuning_sizes_) c.bytes += size;
  if (degraded_.load()) {
    const StoreCounts m = CountsOf(*overlay_);
    c.evictions += m.evictions;
    c.entries += m.entries;
    c.bytes += m.bytes;
    c.kernel_bytes += m.kernel_bytes;
  }
  return c;
}

absl::StatusOr<int> RocksDbStore::IngestInbox() {
  if (role_ != DbRole::kWriter) {
    return absl::FailedPreconditionError("only the writer ingests the inbox");
  }
  if (degraded_.load()) return 0;
  const inbox::Refusals refusals = inbox::SetAsideUnsafe(path_);
  for (const std::string& batch : refusals.batches) Log(kLogWarning, "pto cache: " + batch);
  bool new_refusal = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    new_refusal = !refusals.inbox.empty() && refusals.inbox != inbox_refusal_;
    inbox_refusal_ = refusals.inbox;
  }
  if (new_refusal) Log(kLogWarning, "pto cache: " + refusals.inbox);  // once, not every round
  int ingested = 0;
  for (const inbox::Pending& batch : inbox::List(path_)) {
    std::vector<rocksdb::IngestExternalFileArg> args;
    for (const auto& [family, file] : batch.files) {
      rocksdb::ColumnFamilyHandle* handle = nullptr;
      for (rocksdb::ColumnFamilyHandle* h : handles_) {
        if (h->GetName() == family) handle = h;
      }
      if (handle == nullptr) continue;  // a family this version does not know
      rocksdb::IngestExternalFileArg arg;
      arg.column_family = handle;
      arg.external_files = {file};
      arg.options.move_files = true;           // a hard link, no copy
      arg.options.write_global_seqno = false;  // the MANIFEST records it; the file is unchanged
      arg.options.verify_checksums_before_ingest = true;
      args.push_back(std::move(arg));
    }
    rocksdb::Status s = args.empty() ? rocksdb::Status::OK() : db_->IngestExternalFiles(args);
    if (s.ok()) {
      inbox::Remove(batch);
      ++ingested;
      continue;
    }
    if (s.IsCorruption() || s.IsInvalidArgument()) {
      Log(kLogWarning, absl::StrCat("pto cache: dropped the unusable inbox batch ", batch.dir, ": ",
                                    s.ToString()));
      inbox::Remove(batch);
      continue;
    }
    // Anything else (e.g. a full disk) is retried later; the batch stays.
    return FromRocks(s, absl::StrCat("cannot ingest the inbox batch ", batch.dir), path_);
  }
  if (ingested > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::Status st = LoadIndex(/*full_scan=*/false); !st.ok()) return st;
    if (absl::Status st = EvictLocked(lru_.Victims(capacity_bytes_)); !st.ok()) return st;
  }
  return ingested;
}

absl::Status RocksDbStore::TryCatchUp() {
  if (role_ != DbRole::kReader) return absl::OkStatus();
  std::lock_guard<std::mutex> catch_up(catch_up_mu_);
  rocksdb::Status s = db_->TryCatchUpWithPrimary();
  if (!s.ok()) return FromRocks(s, "cannot catch up with the cache's writer", path_);
  return absl::OkStatus();
}

absl::Status RocksDbStore::CatchUp() {
  if (role_ != DbRole::kReader) return absl::OkStatus();
  if (absl::Status s = TryCatchUp(); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  return LoadIndex(/*full_scan=*/false);
}

absl::Status RocksDbStore::FlushPendingUsage() {
  if (role_ != DbRole::kReader || degraded_.load()) return absl::OkStatus();
  inbox::Batch batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_usage_.empty()) return absl::OkStatus();
    for (const auto& [key, usage] : pending_usage_) {
      batch[kMetaFamily].push_back({inbox::Entry::Op::kPut, UsageKey(key), EncodeUsage(usage)});
    }
    pending_usage_.clear();
  }
  return HandOver(batch);
}

absl::Status RocksDbStore::AddCounters(const CacheStats& delta) {
  if (role_ == DbRole::kReadOnly || degraded_.load()) return absl::OkStatus();
  CacheStats d = delta;
  inbox::Batch batch;
  rocksdb::WriteBatch write;
  for (int i = 0; i < kCounters; ++i) {
    const int64_t v = *CounterField(d, i);
    if (v == 0) continue;
    const std::string key = absl::StrCat(kCounterPrefix, kCounterNames[i]);
    batch[kMetaFamily].push_back({inbox::Entry::Op::kMerge, key, EncodeInt64(v)});
    write.Merge(meta_, key, EncodeInt64(v));
  }
  if (write.Count() == 0) return absl::OkStatus();
  if (role_ == DbRole::kReader) return HandOver(batch);
  rocksdb::Status s = db_->Write(WriteOpts(), &write);
  if (!s.ok()) return FromRocks(s, "cannot update the cache's counters", path_);
  return absl::OkStatus();
}

absl::StatusOr<CacheStats> RocksDbStore::ReadCounters() {
  if (role_ == DbRole::kReader) (void)TryCatchUp();
  CacheStats totals;
  for (int i = 0; i < kCounters; ++i) {
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), meta_,
                                 absl::StrCat(kCounterPrefix, kCounterNames[i]), &value);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return FromRocks(s, "cannot read the cache's counters", path_);
    *CounterField(totals, i) = DecodeInt64(value);
  }
  return totals;
}

absl::Status RocksDbStore::Flush() {
  if (role_ != DbRole::kWriter) return absl::OkStatus();
  rocksdb::FlushOptions options;
  options.wait = true;
  rocksdb::Status s = db_->Flush(options, handles_);
  if (!s.ok()) return FromRocks(s, "flush failed", path_);
  return absl::OkStatus();
}

absl::Status RocksDbStore::CompactAll() {
  if (role_ != DbRole::kWriter) return absl::OkStatus();
  for (rocksdb::ColumnFamilyHandle* h : handles_) {
    rocksdb::Status s = db_->CompactRange(rocksdb::CompactRangeOptions(), h, nullptr, nullptr);
    if (!s.ok()) return FromRocks(s, "compaction failed", path_);
  }
  return absl::OkStatus();
}

}  // namespace pto::cache
