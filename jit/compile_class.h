// Compiles one shape class of a trace variant: the whole pipeline (jit/pipeline.h) with the
// cache's tuned configs, the class's plan record, and the counters a Function reports.
#ifndef PTO_JIT_COMPILE_CLASS_H_
#define PTO_JIT_COMPILE_CLASS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/call_validation.h"
#include "jit/dispatch_table.h"
#include "jit/runtime_impl.h"
#include "jit/trace_variants.h"
#include "jit/tuning/apply_tuning_records.h"

namespace pto::detail {

struct CompileCounters {
  std::atomic<int64_t> compiles{0};
  std::atomic<int64_t> kernels_compiled{0};  // LLVM code generation runs
  std::atomic<int64_t> kernels_loaded{0};    // object code loaded from the cache
  std::atomic<int64_t> nanos{0};
  std::atomic<int64_t> kernels_tuned_cached{0};    // complete tuning records applied
  std::atomic<int64_t> tuning_records_applied{0};  // tuning records applied, complete or not
};

// What the pipeline needs besides the traced graph, from the Runtime and the Function.
jit::PipelineOptions PipelineOptionsOf(RuntimeImpl& runtime,
                                       const std::vector<bool>& constant_inputs,
                                       const std::vector<InPlaceOutput>& in_place_outputs);
// Where the tuned configs of a Function's shape class come from: the Runtime's cache, unless
// it retunes.
jit::TuningRecordSource TuningRecordsOf(RuntimeImpl& runtime, const std::string& function,
                                        const std::string& shape_class);

struct CompiledClassResult {
  std::unique_ptr<CompiledClass> cls;
  jit::AppliedTuning tuning;  // the records applied, per kernel (for the tuning queue)
};

// `shape_class`: a class of `v`'s symbols (jit::Classify of the call's values, or
// jit::GenericClass); `shapes`: the call that needs it.
absl::StatusOr<CompiledClassResult> CompileClass(RuntimeImpl& runtime, const std::string& function,
                                                 const TraceVariant& v, const CallShapes& shapes,
                                                 jit::ShapeClass shape_class,
                                                 const std::vector<bool>& constant_inputs,
                                                 const std::vector<InPlaceOutput>& in_place,
                                                 CompileCounters& counters);

}  // namespace pto::detail

#endif  // PTO_JIT_COMPILE_CLASS_H_
