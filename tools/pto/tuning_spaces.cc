#include "tools/pto/tuning_spaces.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner/hardware_rules.h"

namespace pto::tools {
namespace {

// Grains of the plan's split along the first grid dimension.
const std::vector<int64_t> kTileRows = {1, 2, 4, 8, 16, 32, 64};
// Vectors per inner-loop iteration.
const std::vector<int64_t> kUnroll = {1, 2, 4, 8};

tuner::SearchSpaceSpec VectorLoopSpec(std::string kind, const device::DeviceInfo& info) {
  tuner::SearchSpaceSpec spec;
  spec.kind = std::move(kind);
  spec.search_space_version = 1;
  spec.parameters = {{"tile_rows", kTileRows},
                     {"vector_width", tuner::VectorWidthCandidates(info)},
                     {"unroll", kUnroll}};
  return spec;
}

tuner::SearchSpaceSpec MatmulSpec(const device::DeviceInfo& info) {
  tuner::SearchSpaceSpec spec;
  spec.kind = "matmul";
  spec.search_space_version = 1;
  spec.parameters = {{"tile_rows", kTileRows},
                     {"vector_width", tuner::VectorWidthCandidates(info)},
                     {"mr", {1, 2, 4, 6, 8}},
                     {"nr_vectors", {1, 2, 3, 4}}};
  spec.constraints.push_back(tuner::RegisterCapacity(info));
  return spec;
}

}  // namespace

std::vector<std::string> TuningSpaceKinds() {
  return {"elementwise", "matmul", "reduce", "row_op"};
}

absl::StatusOr<tuner::SearchSpace> TuningSpace(absl::string_view kind,
                                               const device::DeviceInfo& info) {
  if (kind == "matmul") return tuner::SearchSpace::Create(MatmulSpec(info));
  if (kind == "elementwise" || kind == "reduce" || kind == "row_op") {
    return tuner::SearchSpace::Create(VectorLoopSpec(std::string(kind), info));
  }
  return absl::NotFoundError(absl::StrCat("unknown search space kind '", kind, "' (known: ",
                                          absl::StrJoin(TuningSpaceKinds(), ", "), ")"));
}

absl::Status ValidateTuningRecord(const proto::TuningRecord& record,
                                  const device::DeviceInfo& info) {
  if (record.space_kind().empty()) {
    return absl::InvalidArgumentError("the record names no search space (space_kind is empty)");
  }
  absl::StatusOr<tuner::SearchSpace> space = TuningSpace(record.space_kind(), info);
  if (!space.ok()) return space.status();
  if (record.search_space_version() != static_cast<uint32_t>(space->search_space_version())) {
    return absl::FailedPreconditionError(
        absl::StrCat("search space version ", record.search_space_version(), " (this pto's ",
                     space->kind(), " space is version ", space->search_space_version(), ")"));
  }
  absl::StatusOr<tuner::Config> config = space->Parse(record.config());
  if (!config.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("config '", record.config(), "' is not a ",
                                                   space->kind(),
                                                   " config: ", config.status().message()));
  }
  if (absl::Status in = space->Contains(*config); !in.ok()) {
    return absl::Status(
        in.code(), absl::StrCat("config '", record.config(), "' is outside the ", space->kind(),
                                " space on this machine: ", in.message()));
  }
  return absl::OkStatus();
}

}  // namespace pto::tools
