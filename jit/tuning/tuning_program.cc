#include "jit/tuning/tuning_program.h"

#include <utility>

namespace pto::jit {

TuningProgram::TuningProgram(std::string function, std::string shape_class, ir::Graph traced,
                             ShapeClass cls, LoweredProgram program,
                             std::vector<int64_t> measure_symbols)
    : function_(std::move(function)),
      shape_class_(std::move(shape_class)),
      traced_(std::move(traced)),
      cls_(std::move(cls)),
      program_(std::move(program)),
      measure_symbols_(std::move(measure_symbols)) {}

absl::StatusOr<std::vector<ProgramData>*> TuningProgram::CheckData() {
  std::call_once(check_once_, [this] {
    std::vector<ProgramData> sets;
    uint64_t seed = 1000;
    for (const std::vector<int64_t>& symbols : CheckSymbolValues(cls_)) {
      absl::StatusOr<ProgramData> data =
          MakeProgramData(traced_, program_, symbols, seed, /*reference=*/true);
      seed += 100;
      if (!data.ok()) {
        check_ = data.status();
        return;
      }
      sets.push_back(*std::move(data));
    }
    check_ = std::move(sets);
  });
  if (!check_.ok()) return check_.status();
  return &*check_;
}

absl::StatusOr<std::vector<ProgramData>> TuningProgram::TimingData(int64_t rotation_bytes) const {
  constexpr int kMaxSets = 8;
  constexpr int64_t kMaxBytes = int64_t{512} << 20;
  std::vector<ProgramData> result;
  int64_t set_bytes = 0;
  do {
    absl::StatusOr<ProgramData> data =
        MakeProgramData(traced_, program_, measure_symbols_,
                        7 + static_cast<uint64_t>(result.size()) * 100, /*reference=*/false);
    if (!data.ok()) return data.status();
    if (result.empty()) {
      for (const ops::HostTensor& t : data->inputs) set_bytes += t.NumElements() * 4;
      for (const ops::HostTensor& t : data->outputs) set_bytes += t.NumElements() * 4;
    }
    result.push_back(*std::move(data));
  } while (static_cast<int>(result.size()) < kMaxSets &&
           static_cast<int64_t>(result.size()) * set_bytes < rotation_bytes &&
           static_cast<int64_t>(result.size() + 1) * set_bytes <= kMaxBytes);
  return result;
}

}  // namespace pto::jit
