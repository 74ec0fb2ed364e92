#include "cache/cache_store.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cache/memory_store.h"
#include "cache/record_check.h"
#include "cache/shared_store.h"

namespace pto::cache {
namespace {

absl::Status CheckRecord(const proto::KernelRecord& r) {
  if (r.symbol().empty()) return absl::InvalidArgumentError("KernelRecord.symbol is empty");
  if (r.kernel_description().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("KernelRecord.kernel_description is empty (symbol ", r.symbol(), ")"));
  }
  return absl::OkStatus();
}

absl::Status CheckRecord(const proto::PlanRecord& r) {
  if (r.graph_hash().empty()) return absl::InvalidArgumentError("PlanRecord.graph_hash is empty");
  return absl::OkStatus();
}

absl::Status CheckRecord(const proto::TuningRecord& r) {
  if (r.fusion_group_hash().empty()) {
    return absl::InvalidArgumentError("TuningRecord.fusion_group_hash is empty");
  }
  return absl::OkStatus();
}

void FillUsage(proto::KernelRecord* record, const int64_t last_used, const int64_t hits) {
  record->set_last_used_unix_ms(last_used);
  record->set_hits(hits);
}
void FillUsage(proto::PlanRecord*, int64_t, int64_t) {}
void FillUsage(proto::TuningRecord*, int64_t, int64_t) {}

}  // namespace

CacheStore::CacheStore(std::function<int64_t()> clock_ms) : clock_ms_(std::move(clock_ms)) {}

int64_t CacheStore::NowMs() const {
  if (clock_ms_) return clock_ms_();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

template <typename Record, typename Parts>
absl::StatusOr<std::optional<Record>> CacheStore::GetRecord(RecordKind kind, const Parts& parts,
                                                            const std::string& key) {
  absl::StatusOr<Loaded> loaded = Load(kind, key);
  if (!loaded.ok()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return loaded.status();
  }
  if (loaded->state == Loaded::State::kHit) {
    Record record;
    if (RecordProblem(loaded->payload, key, &record).empty() && KeyPartsOf(record) == parts) {
      FillUsage(&record, loaded->last_used_unix_ms, loaded->hits);
      hits_.fetch_add(1, std::memory_order_relaxed);
      return std::optional<Record>(std::move(record));
    }
    loaded->state = Loaded::State::kCorrupt;
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  if (loaded->state == Loaded::State::kCorrupt) {
    corrupt_.fetch_add(1, std::memory_order_relaxed);
    // Best effort: the next Put rewrites the key anyway.
    (void)Erase(kind, key);
  }
  return std::optional<Record>();
}

template <typename Record>
absl::Status CacheStore::PutRecord(RecordKind kind, const Record& record, const std::string& key) {
  if (absl::Status s = CheckRecord(record); !s.ok()) return s;
  std::string payload;
  if (record.schema_version() == kSchemaVersion) {
    payload = record.SerializeAsString();
  } else {
    Record copy = record;
    copy.set_schema_version(kSchemaVersion);
    payload = copy.SerializeAsString();
  }
  if (absl::Status s = Store(kind, key, std::move(payload)); !s.ok()) return s;
  puts_.fetch_add(1, std::memory_order_relaxed);
  if (kind == RecordKind::kKernel) kernel_puts_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<proto::KernelRecord>> CacheStore::GetKernel(
    const KernelKeyParts& parts) {
  return GetRecord<proto::KernelRecord>(RecordKind::kKernel, parts, KernelKey(parts));
}

absl::StatusOr<std::optional<proto::PlanRecord>> CacheStore::GetPlan(const PlanKeyParts& parts) {
  return GetRecord<proto::PlanRecord>(RecordKind::kPlan, parts, PlanKey(parts));
}

absl::StatusOr<std::optional<proto::TuningRecord>> CacheStore::GetTuning(
    const TuningKeyParts& parts) {
  return GetRecord<proto::TuningRecord>(RecordKind::kTuning, parts, TuningKey(parts));
}

absl::Status CacheStore::PutKernel(const proto::KernelRecord& record) {
  const std::string key = KernelKey(KeyPartsOf(record));
  if (record.created_unix_ms() == 0 || record.last_used_unix_ms() != 0 || record.hits() != 0) {
    // Usage lives in the store's side index, not in the stored record.
    proto::KernelRecord copy = record;
    if (copy.created_unix_ms() == 0) copy.set_created_unix_ms(NowMs());
    copy.clear_last_used_unix_ms();
    copy.clear_hits();
    return PutRecord(RecordKind::kKernel, copy, key);
  }
  return PutRecord(RecordKind::kKernel, record, key);
}

absl::Status CacheStore::PutPlan(const proto::PlanRecord& record) {
  return PutRecord(RecordKind::kPlan, record, PlanKey(KeyPartsOf(record)));
}

absl::Status CacheStore::PutTuning(const proto::TuningRecord& record) {
  return PutRecord(RecordKind::kTuning, record, TuningKey(KeyPartsOf(record)));
}

CacheStats CacheStore::stats() const {
  CacheStats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.misses = misses_.load(std::memory_order_relaxed);
  s.corrupt = corrupt_.load(std::memory_order_relaxed);
  s.puts = puts_.load(std::memory_order_relaxed);
  s.kernel_puts = kernel_puts_.load(std::memory_order_relaxed);
  const StoreCounts counts = Counts();
  s.evictions = counts.evictions;
  s.entries = counts.entries;
  s.bytes = counts.bytes;
  s.kernel_bytes = counts.kernel_bytes;
  return s;
}

CacheStats CacheStore::TotalStats() { return stats(); }

absl::Status CacheStore::Scan(RecordKind kind,
                              const std::function<void(const ScannedRecord&)>& fn) {
  return ScanRaw(kind, [&](ScannedRecord& r) {
    if (r.problem.empty()) r.problem = RecordProblem(kind, r.payload, r.key);
    fn(r);
  });
}

absl::Status CacheStore::Remove(RecordKind kind, const std::string& key) {
  return Erase(kind, key);
}

absl::StatusOr<std::unique_ptr<CacheStore>> OpenCache(const CacheOptions& options) {
  if (options.capacity_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("CacheOptions.capacity_bytes must be positive, got ", options.capacity_bytes));
  }
  if (options.path.empty()) return std::unique_ptr<CacheStore>(new MemoryStore(options));
  absl::StatusOr<std::unique_ptr<SharedStore>> db = SharedStore::Open(options);
  if (db.ok()) return std::unique_ptr<CacheStore>(std::move(*db));
  if (options.log) {
    options.log(kLogWarning,
                absl::StrCat("pto cache: cannot use the cache database at '", options.path,
                             "': ", db.status().message(),
                             "; continuing with a memory-only cache (nothing compiled in this "
                             "process will persist)"));
  }
  return std::unique_ptr<CacheStore>(new MemoryStore(options));
}

absl::StatusOr<std::unique_ptr<CacheStore>> OpenPersistentCache(const CacheOptions& options,
                                                                UnsafeDirectory unsafe) {
  if (options.capacity_bytes <= 0 || options.path.empty()) {
    return absl::InvalidArgumentError(
        "OpenPersistentCache needs a path and a positive capacity_bytes");
  }
  absl::StatusOr<std::unique_ptr<SharedStore>> db = SharedStore::Open(options, unsafe);
  if (!db.ok()) return db.status();
  return std::unique_ptr<CacheStore>(std::move(*db));
}

}  // namespace pto::cache
