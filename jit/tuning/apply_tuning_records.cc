#include "jit/tuning/apply_tuning_records.h"

#include "absl/strings/str_cat.h"
#include "jit/tuning/tuning_record.h"

namespace pto::jit {

AppliedTuning ApplyTuningRecords(ir::TileGraph& tiles, const TuningRecordSource& source) {
  AppliedTuning applied;
  applied.records.resize(tiles.calls.size());
  if (source.store == nullptr) return applied;
  for (size_t c = 0; c < tiles.calls.size(); ++c) {
    ir::Kernel& kernel = tiles.calls[c].kernel;
    absl::StatusOr<std::optional<proto::TuningRecord>> record = source.store->GetTuning(
        TuningKeyOf(kernel, source.shape_class, source.performance_fingerprint));
    if (!record.ok() || !record->has_value()) continue;
    absl::StatusOr<ir::TileConfig> config = ConfigFromRecord(**record, kernel, *source.device);
    if (!config.ok()) {
      if (source.logger != nullptr) {
        source.logger->Log(LogLevel::kWarning,
                           absl::StrCat("pto: ignoring the tuning record of kernel ", kernel.name,
                                        " of '", source.function_name, "' for ", source.shape_class,
                                        ": ", config.status().ToString()));
      }
      continue;
    }
    kernel.config = *config;
    ++applied.applied;
    if ((*record)->complete()) ++applied.complete;
    applied.records[c] = *std::move(*record);
  }
  return applied;
}

}  // namespace pto::jit
