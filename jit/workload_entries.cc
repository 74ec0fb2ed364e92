#include "jit/workload_entries.h"

#include "absl/strings/str_cat.h"
#include "jit/graph/graph_def.h"

namespace pto::detail {

std::vector<proto::WorkloadEntry> WorkloadEntries(
    const std::string& function, const std::vector<std::unique_ptr<TraceVariant>>& variants,
    const std::vector<std::unique_ptr<CompiledClass>>& classes,
    const std::vector<int>& constant_inputs) {
  std::vector<proto::WorkloadEntry> result;
  for (size_t vi = 0; vi < variants.size(); ++vi) {
    const TraceVariant& v = *variants[vi];
    proto::WorkloadEntry entry;
    for (const std::unique_ptr<CompiledClass>& e : classes) {
      if (e->variant != &v) continue;
      bool empty = false;  // a call with a size-0 dim has nothing to tune
      for (const std::vector<int64_t>& shape : e->first_shapes) {
        for (int64_t d : shape) empty = empty || d == 0;
      }
      if (empty) continue;
      proto::WorkloadShapeClass* c = entry.add_shape_classes();
      c->set_shape_class(e->shape_class);
      for (const std::vector<int64_t>& shape : e->first_shapes) {
        proto::WorkloadTensorShape* t = c->add_input_shapes();
        for (int64_t d : shape) t->add_dims(d);
      }
      c->set_calls(e->calls.load(std::memory_order_relaxed));
      c->set_total_seconds(e->call_nanos.load(std::memory_order_relaxed) * 1e-9);
    }
    if (entry.shape_classes_size() == 0) continue;
    entry.set_name(variants.size() == 1 ? function : absl::StrCat(function, "#", vi));
    *entry.mutable_graph() = graph::ToGraphDef(v.graph);
    entry.mutable_graph()->set_name(entry.name());
    for (int c : constant_inputs) entry.add_constant_inputs(c);
    result.push_back(std::move(entry));
  }
  return result;
}

}  // namespace pto::detail
