#include "tools/pto/tuning_spaces.h"

#include <string_view>

#include "jit/tuning/kernel_space.h"

namespace pto::tools {

std::vector<std::string> TuningSpaceKinds() { return jit::SpaceKinds(); }

absl::StatusOr<tuner::SearchSpace> TuningSpace(absl::string_view kind,
                                               const device::DeviceInfo& info) {
  return jit::KindSearchSpace(std::string_view(kind.data(), kind.size()), info);
}

absl::Status ValidateTuningRecord(const proto::TuningRecord& record,
                                  const device::DeviceInfo& info) {
  if (record.space_kind().empty()) {
    return absl::InvalidArgumentError("the record names no search space (space_kind is empty)");
  }
  return jit::ValidateSpaceConfig(record.space_kind(), record.search_space_version(),
                                  record.config(), info);
}

}  // namespace pto::tools
