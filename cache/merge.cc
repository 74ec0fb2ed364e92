#include "cache/merge.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace pto::cache {
namespace {

// Keys of the sound records of `kind` in `store`.
absl::StatusOr<absl::flat_hash_set<std::string>> SoundKeys(CacheStore& store, RecordKind kind) {
  absl::flat_hash_set<std::string> keys;
  absl::Status s = store.Scan(kind, [&](const ScannedRecord& r) {
    if (r.problem.empty()) keys.insert(r.key);
  });
  if (!s.ok()) return s;
  return keys;
}

// The sound records of `kind` in `store`, parsed.
template <typename Record>
absl::StatusOr<std::vector<Record>> SoundRecords(CacheStore& store, RecordKind kind,
                                                 int64_t* unsound) {
  std::vector<Record> records;
  absl::Status s = store.Scan(kind, [&](const ScannedRecord& r) {
    Record record;
    if (!r.problem.empty() || !record.ParseFromString(r.payload)) {
      ++*unsound;
      return;
    }
    records.push_back(std::move(record));
  });
  if (!s.ok()) return s;
  return records;
}

}  // namespace

double SpeedUp(const proto::TuningRecord& record) {
  if (record.best_seconds() <= 0 || record.default_seconds() <= 0) return 0;
  return record.default_seconds() / record.best_seconds();
}

absl::StatusOr<MergeReport> MergeInto(CacheStore& dst, CacheStore& src) {
  MergeReport report;
  {
    absl::StatusOr<absl::flat_hash_set<std::string>> present = SoundKeys(dst, RecordKind::kKernel);
    if (!present.ok()) return present.status();
    absl::StatusOr<std::vector<proto::KernelRecord>> kernels =
        SoundRecords<proto::KernelRecord>(src, RecordKind::kKernel, &report.skipped_unsound);
    if (!kernels.ok()) return kernels.status();
    if (!src.code_trusted()) {
      report.kernels_refused = static_cast<int64_t>(kernels->size());
      report.kernels_refused_why = src.WhyCodeUntrusted();
      kernels->clear();
    }
    for (proto::KernelRecord& kernel : *kernels) {
      if (present->contains(KernelKey(KeyPartsOf(kernel)))) {
        ++report.kernels_present;
        continue;
      }
      kernel.clear_hits();
      kernel.clear_last_used_unix_ms();
      if (absl::Status s = dst.PutKernel(kernel); !s.ok()) return s;
      ++report.kernels_copied;
    }
  }
  {
    absl::StatusOr<absl::flat_hash_set<std::string>> present = SoundKeys(dst, RecordKind::kPlan);
    if (!present.ok()) return present.status();
    absl::StatusOr<std::vector<proto::PlanRecord>> plans =
        SoundRecords<proto::PlanRecord>(src, RecordKind::kPlan, &report.skipped_unsound);
    if (!plans.ok()) return plans.status();
    for (const proto::PlanRecord& plan : *plans) {
      if (present->contains(PlanKey(KeyPartsOf(plan)))) {
        ++report.plans_present;
        continue;
      }
      if (absl::Status s = dst.PutPlan(plan); !s.ok()) return s;
      ++report.plans_copied;
    }
  }
  int64_t dst_unsound = 0;  // an unsound record in dst counts as absent
  absl::StatusOr<std::vector<proto::TuningRecord>> mine =
      SoundRecords<proto::TuningRecord>(dst, RecordKind::kTuning, &dst_unsound);
  if (!mine.ok()) return mine.status();
  absl::flat_hash_map<std::string, double> speed_up;
  for (const proto::TuningRecord& record : *mine) {
    speed_up[TuningKey(KeyPartsOf(record))] = SpeedUp(record);
  }
  absl::StatusOr<std::vector<proto::TuningRecord>> theirs =
      SoundRecords<proto::TuningRecord>(src, RecordKind::kTuning, &report.skipped_unsound);
  if (!theirs.ok()) return theirs.status();
  for (const proto::TuningRecord& record : *theirs) {
    const auto it = speed_up.find(TuningKey(KeyPartsOf(record)));
    if (it != speed_up.end() && it->second >= SpeedUp(record)) {
      ++report.tuning_kept;
      continue;
    }
    if (absl::Status s = dst.PutTuning(record); !s.ok()) return s;
    ++(it == speed_up.end() ? report.tuning_copied : report.tuning_replaced);
  }
  return report;
}

}  // namespace pto::cache
