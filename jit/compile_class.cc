#include "jit/compile_class.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "device/release_memory.h"
#include "jit/pipeline.h"
#include "jit/plan_records.h"

namespace pto::detail {
namespace {

// "lowering 3 ms, compile_kernels 120 ms": where the compile's time went.
std::string StepSummary(const std::vector<jit::StepTime>& steps) {
  double lowering = 0, compiling = 0;
  for (const jit::StepTime& s : steps)
    (s.step == "compile_kernels" ? compiling : lowering) += s.seconds;
  return absl::StrCat("lowering ", static_cast<int64_t>(lowering * 1e3), " ms, compile_kernels ",
                      static_cast<int64_t>(compiling * 1e3), " ms");
}

}  // namespace

jit::PipelineOptions PipelineOptionsOf(RuntimeImpl& runtime,
                                       const std::vector<bool>& constant_inputs,
                                       const std::vector<InPlaceOutput>& in_place_outputs) {
  jit::PipelineOptions o;
  o.device = &runtime.device();
  o.logger = &runtime.logger();
  o.log_passes = runtime.options().log_passes;
  o.constant_inputs = constant_inputs;
  o.in_place_outputs = in_place_outputs;
  return o;
}

jit::TuningRecordSource TuningRecordsOf(RuntimeImpl& runtime, const std::string& function,
                                        const std::string& shape_class) {
  jit::TuningRecordSource source;
  const bool retuning = runtime.options().tuning.retune && runtime.tuning_service() != nullptr;
  source.store = retuning ? nullptr : &runtime.store();
  source.shape_class = shape_class;
  source.performance_fingerprint = runtime.performance_fingerprint();
  source.device = &runtime.device();
  source.logger = &runtime.logger();
  source.function_name = function;
  return source;
}

absl::StatusOr<CompiledClassResult> CompileClass(RuntimeImpl& runtime, const std::string& function,
                                                 const TraceVariant& v, const CallShapes& shapes,
                                                 jit::ShapeClass shape_class,
                                                 const std::vector<bool>& constant_inputs,
                                                 const std::vector<InPlaceOutput>& in_place,
                                                 CompileCounters& counters) {
  auto cls = std::make_unique<CompiledClass>();
  cls->variant = &v;
  cls->num_symbols = static_cast<int>(v.symbols.size());
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    cls->first_shapes.emplace_back(shapes.dims[i], shapes.dims[i] + shapes.rank[i]);
  }
  cls->cls = std::move(shape_class);
  cls->shape_class = ShapeClassKey(v, cls->cls);
  cls->label = ShapeClassLabel(v, cls->cls);
  const auto start = std::chrono::steady_clock::now();
  const int64_t loads_before = runtime.compiler().cache_loads();
  jit::BuildPlanOptions build;
  build.origin.graph_name = function;
  build.origin.shape_class = cls->label;
  build.threads = runtime.threads();
  absl::StatusOr<jit::CompiledProgram> compiled = jit::CompileShapeClass(
      v.graph, cls->cls, PipelineOptionsOf(runtime, constant_inputs, in_place),
      TuningRecordsOf(runtime, function, cls->shape_class), runtime.compiler(), build);
  if (!compiled.ok()) return compiled.status();
  cls->current = std::move(compiled->built.plan);
  cls->plan.store(cls->current.get(), std::memory_order_relaxed);
  cls->program = std::move(compiled->program);
  cls->default_configs = std::move(compiled->default_configs);
  WritePlanRecord(runtime.store(), runtime.logger(), function, v.graph_hash, cls->shape_class,
                  std::move(compiled->built.kernel_keys));
  for (int o : v.graph.outputs) cls->output_shapes.push_back(v.graph.nodes[o].shape);
  const int64_t nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  // What the compiler freed goes back to the system, not into the caller's resident set.
  if (compiled->built.kernels_compiled > 0) device::ReleaseFreedHeapMemory();
  counters.nanos.fetch_add(nanos);
  counters.compiles.fetch_add(1);
  counters.kernels_compiled.fetch_add(compiled->built.kernels_compiled);
  counters.kernels_loaded.fetch_add(runtime.compiler().cache_loads() - loads_before);
  counters.kernels_tuned_cached.fetch_add(compiled->tuning.complete);
  counters.tuning_records_applied.fetch_add(compiled->tuning.applied);
  if (jit::Timeline* timeline = runtime.timeline(); timeline != nullptr) {
    timeline->Add(absl::StrCat("compile ", function, " ", cls->label),
                  jit::EventCategory::kShapeClass, start, start + std::chrono::nanoseconds(nanos),
                  {{"kernels", absl::StrCat(cls->current->kernels.size())},
                   {"kernels compiled", absl::StrCat(compiled->built.kernels_compiled)},
                   {"steps", StepSummary(cls->program.steps)}});
  }
  runtime.logger().Log(LogLevel::kInfo,
                       absl::StrCat("pto: compiled '", function, "' for ", cls->label, ": ",
                                    cls->current->kernels.size(), " kernels in ", nanos / 1000000,
                                    " ms (", StepSummary(cls->program.steps), ")"));
  return CompiledClassResult{std::move(cls), std::move(compiled->tuning)};
}

}  // namespace pto::detail
