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

absl::StatusOr<std::vector<ProgramData>> TuningProgram::TimingData(int sets) const {
  std::vector<ProgramData> result;
  for (int s = 0; s < sets; ++s) {
    absl::StatusOr<ProgramData> data = MakeProgramData(traced_, program_, measure_symbols_,
                                                       7 + static_cast<uint64_t>(s) * 100, false);
    if (!data.ok()) return data.status();
    result.push_back(*std::move(data));
  }
  return result;
}

int64_t TuningProgram::SetBytes() const {
  int64_t elements = 0;
  for (const ir::Node& node : traced_.nodes) {
    if (node.op != ir::OpKind::kInput) continue;
    int64_t n = 1;
    for (const ir::SymExpr& d : node.shape) n *= d.Evaluate(measure_symbols_);
    elements += n;
  }
  for (int o : traced_.outputs) {
    int64_t n = 1;
    for (const ir::SymExpr& d : traced_.nodes[o].shape) n *= d.Evaluate(measure_symbols_);
    elements += n;
  }
  return elements * 4;
}

}  // namespace pto::jit
