// The search spaces `pto cache import` validates tuning records against: the tuner's own spaces
// (jit/tuning/kernel_space.h), kind-wide because no kernel is at hand yet. A record names its
// space by TuningRecord.space_kind and carries its version in search_space_version.
#ifndef PTO_TOOLS_PTO_TUNING_SPACES_H_
#define PTO_TOOLS_PTO_TUNING_SPACES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "device/device_info.h"
#include "proto/cache.pb.h"
#include "tuner/search_space.h"

namespace pto::tools {

// "elementwise", "matmul", "reduce", "row_op", "scatter_add".
std::vector<std::string> TuningSpaceKinds();

// The kind-wide space of `kind` on `info` (jit::KindSearchSpace); NotFound naming the known
// kinds for any other kind.
absl::StatusOr<tuner::SearchSpace> TuningSpace(absl::string_view kind,
                                               const device::DeviceInfo& info);

// OK if `record.config` may be a config of the space `record.space_kind` names, at the record's
// search-space version, on `info` (jit::ValidateSpaceConfig). Otherwise an error whose message
// says why: no or an unknown kind, another version, a config that does not parse or breaks a
// rule.
absl::Status ValidateTuningRecord(const proto::TuningRecord& record,
                                  const device::DeviceInfo& info);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_TUNING_SPACES_H_
