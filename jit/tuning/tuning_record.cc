#include "jit/tuning/tuning_record.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "cache/checksum.h"
#include "jit/tuning/kernel_space.h"

namespace pto::jit {

std::string KernelComputationHash(const ir::Kernel& kernel) {
  ir::Kernel bare = kernel;
  bare.name.clear();
  bare.config = ir::TileConfig{};
  static constexpr std::array<uint8_t, 16> kKey = {'p', 't', 'o', '-', 'k', 'e', 'r', 'n',
                                                   'e', 'l', '-', 'c', 'o', 'm', 'p', '1'};
  const std::array<uint64_t, 2> h = cache::SipHash128(kKey, ir::KernelToString(bare, {}));
  return absl::StrCat(absl::Hex(h[1], absl::kZeroPad16), absl::Hex(h[0], absl::kZeroPad16));
}

cache::TuningKeyParts TuningKeyOf(const ir::Kernel& kernel, const std::string& bucket,
                                  const std::string& performance_fingerprint) {
  cache::TuningKeyParts parts;
  parts.fusion_group_hash = KernelComputationHash(kernel);
  parts.bucket = bucket;
  parts.dtype = "f32";
  parts.performance_fingerprint = performance_fingerprint;
  parts.search_space_version = kKernelSpaceVersion;
  return parts;
}

absl::StatusOr<proto::TuningRecord> MakeTuningRecord(
    const ir::Kernel& kernel, const std::string& bucket, const std::string& performance_fingerprint,
    const device::DeviceInfo& device, const ir::TileConfig& best, const KernelTuning& result,
    const std::string& found_by, bool complete) {
  absl::StatusOr<tuner::SpaceRules> space = KernelSpaceRules(kernel, device);
  if (!space.ok()) return space.status();
  const cache::TuningKeyParts parts = TuningKeyOf(kernel, bucket, performance_fingerprint);
  proto::TuningRecord record;
  record.set_fusion_group_hash(parts.fusion_group_hash);
  record.set_bucket(parts.bucket);
  record.set_dtype(parts.dtype);
  record.set_performance_fingerprint(parts.performance_fingerprint);
  record.set_search_space_version(parts.search_space_version);
  record.set_config(space->ToString(ToSpaceConfig(*space, best)));
  record.set_best_seconds(result.best_seconds);
  record.set_default_seconds(result.default_seconds);
  record.set_found_by(found_by);
  record.set_space_kind(SpaceKind(kernel.kind));
  record.set_trials(result.trials);
  record.set_complete(complete);
  return record;
}

absl::StatusOr<ir::TileConfig> ConfigFromRecord(const proto::TuningRecord& record,
                                                const ir::Kernel& kernel,
                                                const device::DeviceInfo& device) {
  if (record.search_space_version() != static_cast<uint32_t>(kKernelSpaceVersion)) {
    return absl::FailedPreconditionError(absl::StrCat("tuning record of search space version ",
                                                      record.search_space_version(),
                                                      "; this pto's is ", kKernelSpaceVersion));
  }
  // The kernel's rules decide, as its space would, without enumerating the space.
  absl::StatusOr<tuner::SpaceRules> space = KernelSpaceRules(kernel, device);
  if (!space.ok()) return space.status();
  absl::StatusOr<tuner::Config> config = space->Parse(record.config());
  if (!config.ok()) return config.status();
  if (absl::Status in = space->Contains(*config); !in.ok()) return in;
  return ApplySpaceConfig(*space, *config, kernel.config);
}

}  // namespace pto::jit
