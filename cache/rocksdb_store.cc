// RocksDbStore's record access: Load, Store, Erase and ScanRaw of kernel, plan and tuning
// records for each role, eviction, the sizes it counts, and what a read that finds corruption
// does. Opening is in rocksdb_open.cc, the roles' own work in rocksdb_roles.cc.
#include "cache/rocksdb_store.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cache/envelope.h"
#include "cache/inbox.h"
#include "cache/readable_records.h"
#include "cache/rocksdb_options.h"
#include "cache/rocksdb_store_internal.h"
#include "rocksdb/db.h"
#include "rocksdb/metadata.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"

namespace pto::cache {
namespace {

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
  if (s.IsNotFound() && role_ == DbRole::kReader) s = LookAgainAsReader(kind, key, read, &value);
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
    RecordKernelHit(key, static_cast<int64_t>(value.size()), &loaded);
  }
  return loaded;
}

rocksdb::Status RocksDbStore::LookAgainAsReader(RecordKind kind, const std::string& key,
                                                const rocksdb::ReadOptions& read,
                                                std::string* value) {
  // The writer may have it already (in its WAL, or ingested from another reader's batch),
  // or it may still wait in the inbox.
  rocksdb::Status s = rocksdb::Status::NotFound();
  if (TryCatchUp().ok()) s = db_->Get(read, Family(kind), key, value);
  if (s.IsNotFound()) {
    if (std::optional<std::string> v =
            inbox::Lookup(path_, FamilyName(kind), key, *table_options_)) {
      *value = std::move(*v);
      s = rocksdb::Status::OK();
    } else if (TryCatchUp().ok()) {
      // A batch leaves the inbox only after its ingestion is in the MANIFEST: if it left
      // between the two looks, catching up again finds it.
      s = db_->Get(read, Family(kind), key, value);
    }
  }
  return s;
}

void RocksDbStore::RecordKernelHit(const std::string& key, int64_t stored_bytes, Loaded* loaded) {
  const int64_t now = NowMs();
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<LruIndex::Usage> usage = lru_.Touch(key, now);
  if (!usage) {
    // No usage entry (lost with a repair, or a racing eviction; the latter is corrected when
    // the key is next found missing; for a reader, the writer has not ingested it yet).
    usage = LruIndex::Usage{stored_bytes, now, 1};
    lru_.Upsert(key, *usage);
  }
  loaded->last_used_unix_ms = usage->last_used_unix_ms;
  loaded->hits = usage->hits;
  if (role_ == DbRole::kReader) {
    pending_usage_[key] = *usage;  // handed to the writer in batches
  } else if (!degraded_.load()) {
    // One small WAL append per kernel load (loads happen when plans are built, not per call).
    db_->Put(WriteOpts(), meta_, UsageKey(key), EncodeUsage(*usage)).PermitUncheckedError();
  }
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
    if (DropDamagedFile(f)) dropped = true;
  }
  if (dropped) {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::Status st = LoadIndex(/*full_scan=*/true); !st.ok()) {
      Log(kLogWarning, std::string(st.message()));
    }
  }
}

bool RocksDbStore::DropDamagedFile(const rocksdb::LiveFileMetaData& f) {
  // Records of the file that still read back (their blocks are intact) are written again
  // before the file is dropped: only what is damaged is lost.
  rocksdb::WriteBatch salvage;
  CollectReadableRecords(f, &salvage);
  rocksdb::Status s;
  if (salvage.Count() > 0) s = db_->Write(WriteOpts(), &salvage);
  if (s.ok()) s = db_->DeleteFile(f.relative_filename);
  if (s.ok()) {
    Log(kLogWarning, absl::StrCat("pto cache: dropped the damaged file ", f.relative_filename,
                                  " of '", path_, "' (", f.num_entries, " cached records, ",
                                  salvage.Count(), " of them intact and written again)"));
    return true;
  }
  Log(kLogWarning,
      absl::StrCat("pto cache: could not drop the damaged file ", f.relative_filename, " of '",
                   path_, "': ", s.ToString(),
                   "; reads of its records are misses, and compactions reading it fail until "
                   "the database is repaired"));
  return false;
}

void RocksDbStore::CollectReadableRecords(const rocksdb::LiveFileMetaData& f,
                                          rocksdb::WriteBatch* salvage) {
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
  if (family == nullptr) return;
  // The file's keys are found past its damaged blocks by seeking (readable_records.h), those
  // the index knows included.
  ReadableRecordsOptions range;
  range.key_prefix = KeyPrefixOf(f.column_family_name);
  range.lower = f.smallestkey;
  range.upper = f.largestkey;
  range.known_keys = std::move(candidates);
  range.expected_records = static_cast<int64_t>(f.num_entries);
  absl::StatusOr<ReadableRecordsReport> read =
      ReadReadableRecords(*db_, family, range, [&](std::string_view k, std::string_view value) {
        salvage
            ->Put(family, rocksdb::Slice(k.data(), k.size()),
                  rocksdb::Slice(value.data(), value.size()))
            .PermitUncheckedError();
      });
  if (!read.ok()) Log(kLogWarning, std::string(read.status().message()));
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

}  // namespace pto::cache
