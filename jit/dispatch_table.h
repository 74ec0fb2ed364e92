// The shape classes a Function has compiled, and the lock-free table calls find theirs in.
// A call binds its dims to each class's trace variant and checks the class's guard
// (jit::Matches); the first class that takes it runs, the specific classes (jit::Classify)
// before the generic ones (jit::GenericClass). Compiling a class publishes a new table;
// the tables it replaces stay alive for calls that may still read them, until the Function
// goes.
#ifndef PTO_JIT_DISPATCH_TABLE_H_
#define PTO_JIT_DISPATCH_TABLE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jit/call_validation.h"
#include "jit/ir/tile_ir.h"
#include "jit/pipeline.h"
#include "jit/plan.h"
#include "jit/shape_class.h"
#include "jit/trace_variants.h"

namespace pto::detail {

struct CompiledClass {
  const TraceVariant* variant = nullptr;
  jit::ShapeClass cls;
  // The plan calls run: loaded once per call (inside an epoch guard); replaced when a tuned
  // kernel is swapped in, the old one retired to the Runtime's epoch domain.
  std::atomic<const jit::Plan*> plan{nullptr};
  // Advanced after each swap of `plan`, before the old one is retired: a bound call's copy of
  // the plan's launch (jit/bound_call.h) serves while it is unchanged.
  std::atomic<uint64_t> generation{0};
  int num_symbols = 0;  // variant->symbols.size(), beside `plan` for the warm call
  std::vector<ir::Shape> output_shapes;
  std::string shape_class;  // ShapeClassKey: the plan and tuning records' keys
  std::string label;        // ShapeClassLabel (declared dim names): logs, kernel origins, reports
  // Guarded by the Function's lock: the program with the configs of `plan`, and `plan` itself.
  jit::LoweredProgram program;
  std::unique_ptr<const jit::Plan> current;
  std::vector<ir::TileConfig> default_configs;  // per kernel, before tuning records
  // RuntimeOptions::record_workload: the first call's input shapes, calls and their time.
  std::vector<std::vector<int64_t>> first_shapes;
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> call_nanos{0};
};

class DispatchTable {
 public:
  // The class that serves these dims, with its variant's symbol values in `values`: a
  // specific class if one takes them, else a generic one; null if none is installed.
  // Lock-free, allocates nothing.
  const CompiledClass* Find(const CallShapes& shapes, int64_t* values) const;
  // Installs `cls`. Callers serialize (the Function's lock).
  const CompiledClass* Add(std::unique_ptr<CompiledClass> cls);
  // Classes installed, and of them the generic ones (lock-free).
  int64_t size() const;
  int64_t generic_size() const;
  // Every class; only under the lock that serializes Add.
  const std::vector<std::unique_ptr<CompiledClass>>& classes() const { return classes_; }

 private:
  struct Table {
    std::vector<const CompiledClass*> entries;  // the specific classes, then the generic ones
    int64_t generic = 0;
  };
  std::atomic<const Table*> table_{nullptr};
  std::vector<std::unique_ptr<CompiledClass>> classes_;
  std::vector<std::unique_ptr<const Table>> tables_;  // every table published
};

}  // namespace pto::detail

#endif  // PTO_JIT_DISPATCH_TABLE_H_
