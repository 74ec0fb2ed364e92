#include "cache/record_check.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "cache/cache_store.h"

namespace pto::cache {
namespace {

std::string KeyOf(const proto::KernelRecord& r) { return KernelKey(KeyPartsOf(r)); }
std::string KeyOf(const proto::PlanRecord& r) { return PlanKey(KeyPartsOf(r)); }
std::string KeyOf(const proto::TuningRecord& r) { return TuningKey(KeyPartsOf(r)); }

template <typename Record>
std::string Problem(std::string_view payload, std::string_view key, Record* record) {
  if (payload.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !record->ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return "the payload does not parse";
  }
  if (record->schema_version() != kSchemaVersion) {
    return absl::StrCat("schema version ", record->schema_version(), " (expected ", kSchemaVersion,
                        ")");
  }
  if (KeyOf(*record) != key) return "the record's key parts do not hash to its key";
  return "";
}

}  // namespace

std::string RecordProblem(std::string_view payload, std::string_view key,
                          proto::KernelRecord* record) {
  return Problem(payload, key, record);
}

std::string RecordProblem(std::string_view payload, std::string_view key,
                          proto::PlanRecord* record) {
  return Problem(payload, key, record);
}

std::string RecordProblem(std::string_view payload, std::string_view key,
                          proto::TuningRecord* record) {
  return Problem(payload, key, record);
}

std::string RecordProblem(RecordKind kind, std::string_view payload, std::string_view key) {
  switch (kind) {
    case RecordKind::kKernel: {
      proto::KernelRecord record;
      return Problem(payload, key, &record);
    }
    case RecordKind::kPlan: {
      proto::PlanRecord record;
      return Problem(payload, key, &record);
    }
    case RecordKind::kTuning: {
      proto::TuningRecord record;
      return Problem(payload, key, &record);
    }
  }
  return absl::StrCat("unknown record kind ", static_cast<int>(kind));
}

}  // namespace pto::cache
