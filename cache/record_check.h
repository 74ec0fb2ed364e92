// The checks every reader of a stored record makes (a Get, a Scan, a bundle import): the
// payload parses as the record of its kind, has this schema version, and the record's own key
// parts hash to the key it was found under.
#ifndef PTO_CACHE_RECORD_CHECK_H_
#define PTO_CACHE_RECORD_CHECK_H_

#include <string>
#include <string_view>

#include "cache/cache_key.h"
#include "proto/cache.pb.h"

namespace pto::cache {

// Parses `payload` into `record` and returns why it is not a sound record under `key` (e.g.
// "the payload does not parse"), or "" when it is.
std::string RecordProblem(std::string_view payload, std::string_view key,
                          proto::KernelRecord* record);
std::string RecordProblem(std::string_view payload, std::string_view key,
                          proto::PlanRecord* record);
std::string RecordProblem(std::string_view payload, std::string_view key,
                          proto::TuningRecord* record);
// The same for a record of `kind`, not kept.
std::string RecordProblem(RecordKind kind, std::string_view payload, std::string_view key);

}  // namespace pto::cache

#endif  // PTO_CACHE_RECORD_CHECK_H_
