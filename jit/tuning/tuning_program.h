// What the kernel tuning jobs of one compiled shape class share: the traced graph, the program
// as lowered for the class, and the data candidates are checked and timed on (made once, on
// first use, by whichever job needs it first).
#ifndef PTO_JIT_TUNING_TUNING_PROGRAM_H_
#define PTO_JIT_TUNING_TUNING_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "device/device_info.h"
#include "jit/ir/graph.h"
#include "jit/pipeline.h"
#include "jit/shape_class.h"
#include "jit/tuning/tuning_data.h"

namespace pto::jit {

class TuningProgram {
 public:
  // `shape_class`: the class's label, for reports and kernel records. `measure_symbols`: the
  // traced symbol values candidates are timed at (a call's, within the class).
  TuningProgram(std::string function, std::string shape_class, ir::Graph traced, ShapeClass cls,
                LoweredProgram program, std::vector<int64_t> measure_symbols);

  const std::string& function() const { return function_; }
  const std::string& shape_class() const { return shape_class_; }
  const ir::Graph& traced() const { return traced_; }
  const ShapeClass& cls() const { return cls_; }
  // The program as compiled when tuning began (default or cached configs).
  const LoweredProgram& program() const { return program_; }

  // Check data at every CheckSymbolValues set, reference included. The first caller makes it;
  // the others wait and share it. Not thread-safe to use the returned data concurrently: each
  // job runs its checks under CheckLock().
  absl::StatusOr<std::vector<ProgramData>*> CheckData();
  std::mutex& check_mutex() { return check_mu_; }

  // Copies of the inputs (different seeds) at measure_symbols, for rotation: as many as make
  // `rotation_bytes` of inputs and outputs, at least one, at most 8 and 512 MiB.
  absl::StatusOr<std::vector<ProgramData>> TimingData(int64_t rotation_bytes) const;

 private:
  std::string function_;
  std::string shape_class_;
  ir::Graph traced_;
  ShapeClass cls_;
  LoweredProgram program_;
  std::vector<int64_t> measure_symbols_;
  std::mutex check_mu_;  // guards check_ (made once) and its use
  std::once_flag check_once_;
  absl::StatusOr<std::vector<ProgramData>> check_ = absl::UnknownError("not made");
};

}  // namespace pto::jit

#endif  // PTO_JIT_TUNING_TUNING_PROGRAM_H_
