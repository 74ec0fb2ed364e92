#include "jit/reference_runner.h"

#include "jit/trace.h"
#include "ops/reference.h"

namespace pto::jit {

absl::StatusOr<std::vector<ops::HostTensor>> RunReferenceOf(const TraceFn& trace,
                                                            const std::vector<ops::HostTensor>& inputs) {
  std::vector<TraceInput> trace_inputs;
  for (const ops::HostTensor& t : inputs) {
    TraceInput in;
    for (int64_t d : t.shape) in.shape.push_back(ir::SymExpr(d));
    in.dtype = t.dtype == ir::DType::kF64 ? ir::DType::kF32 : t.dtype;  // f64 stands for f32
    trace_inputs.push_back(std::move(in));
  }
  absl::StatusOr<ir::Graph> graph = Trace(trace, trace_inputs, {});
  if (!graph.ok()) return graph.status();
  return ops::RunReference(*graph, inputs);
}

}  // namespace pto::jit
