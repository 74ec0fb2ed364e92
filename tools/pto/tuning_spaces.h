// The search spaces `pto cache import` validates tuning records against: one per kernel kind
// (jit/ir/tile_ir.h KernelKind), over the TileConfig fields that kind uses, pruned by this
// machine's DeviceInfo (tuner/hardware_rules.h). A stand-in until the tuner service defines
// the spaces it searches; a record names its space by TuningRecord.space_kind and carries its
// version in search_space_version.
#ifndef PTO_TOOLS_PTO_TUNING_SPACES_H_
#define PTO_TOOLS_PTO_TUNING_SPACES_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "device/device_info.h"
#include "proto/cache.pb.h"
#include "tuner/search_space.h"

namespace pto::tools {

// "elementwise", "matmul", "reduce", "row_op".
std::vector<std::string> TuningSpaceKinds();

// The space of `kind` on `info`; NotFound naming the known kinds for any other kind.
absl::StatusOr<tuner::SearchSpace> TuningSpace(absl::string_view kind,
                                               const device::DeviceInfo& info);

// OK if `record.config` is a config of the space `record.space_kind` names, at the record's
// search-space version, on `info`. Otherwise an error whose message says why: no or an unknown
// kind, another version, a config that does not parse or violates a constraint.
absl::Status ValidateTuningRecord(const proto::TuningRecord& record,
                                  const device::DeviceInfo& info);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_TUNING_SPACES_H_
