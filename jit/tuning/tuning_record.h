// Tuning records for kernels (proto::TuningRecord in the cache): their keys, and turning a
// record back into a kernel's config, validated against the kernel's search space's rules.
#ifndef PTO_JIT_TUNING_TUNING_RECORD_H_
#define PTO_JIT_TUNING_TUNING_RECORD_H_

#include <string>

#include "absl/status/statusor.h"
#include "cache/cache_key.h"
#include "device/device_info.h"
#include "jit/ir/tile_ir.h"
#include "proto/cache.pb.h"
#include "pto/options.h"

namespace pto::jit {

// The hash of what a kernel computes (its tile IR with the config and name left out): the
// "fusion group hash" of tuning keys. 32 hex digits, the same in every process.
std::string KernelComputationHash(const ir::Kernel& kernel);

// The tuning key of `kernel` in shape class `bucket` on a machine of `performance_fingerprint`.
cache::TuningKeyParts TuningKeyOf(const ir::Kernel& kernel, const std::string& bucket,
                                  const std::string& performance_fingerprint);

// The record of a search over `kernel` (its config: the untuned default the space is built
// around) in `bucket`: its key parts, `best` as the space's config text, the result's times
// and trials, how it was found, and whether the search ended by itself.
absl::StatusOr<proto::TuningRecord> MakeTuningRecord(
    const ir::Kernel& kernel, const std::string& bucket, const std::string& performance_fingerprint,
    const device::DeviceInfo& device, const ir::TileConfig& best, const KernelTuning& result,
    const std::string& found_by, bool complete);

// The config `record` holds for `kernel` (the kernel's config with the space's parameters set
// from it). FailedPrecondition when the record is for another search-space version; the
// space's own error when the text does not parse or the config is outside the space here.
// Checked against the kernel's space rules (KernelSpaceRules): the space is not enumerated.
absl::StatusOr<ir::TileConfig> ConfigFromRecord(const proto::TuningRecord& record,
                                                const ir::Kernel& kernel,
                                                const device::DeviceInfo& device);

}  // namespace pto::jit

#endif  // PTO_JIT_TUNING_TUNING_RECORD_H_
