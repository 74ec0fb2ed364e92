#include "jit/materialize_every_node.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jit/graph/limits.h"
#include "jit/trace.h"

namespace pto::jit {

std::vector<std::vector<int>> MaterializedNodeGroups(const ir::Graph& traced, int64_t max_outputs) {
  std::vector<std::vector<int>> groups;
  for (size_t id = 0; id < traced.nodes.size(); ++id) {
    if (traced.nodes[id].op == ir::OpKind::kInput) continue;
    if (groups.empty() || static_cast<int64_t>(groups.back().size()) >= max_outputs) {
      groups.emplace_back();
    }
    groups.back().push_back(static_cast<int>(id));
  }
  return groups;
}

TraceFn MaterializeNodes(TraceFn program, std::vector<int> nodes) {
  return [program = std::move(program), nodes = std::move(nodes)](std::span<const Value> in) {
    std::vector<Value> outputs = program(in);
    detail::TraceState* state = detail::TraceState::Current();
    if (state == nullptr || !state->status().ok()) return outputs;
    std::vector<Value> values;
    const size_t size = state->graph().nodes.size();
    for (int id : nodes) {
      if (id < 0 || static_cast<size_t>(id) >= size) {
        state->Fail(absl::InvalidArgumentError(
            absl::StrCat("cannot materialize node %", id, ": the trace has ", size, " nodes")));
        return outputs;
      }
      values.emplace_back(state->weak_from_this(), id);
    }
    return values;
  };
}

namespace {

// The static dims of `shape`, nullopt if a dim is symbolic.
std::optional<std::vector<int64_t>> StaticDims(const ir::Shape& shape) {
  std::vector<int64_t> dims;
  for (const ir::SymExpr& d : shape) {
    std::optional<int64_t> c = d.AsConstant();
    if (!c.has_value()) return std::nullopt;
    dims.push_back(*c);
  }
  return dims;
}

ops::HostTensor ToHost(const Tensor& t) {
  ops::HostTensor h;
  h.shape.assign(t.dims().begin(), t.dims().end());
  h.data.resize(t.num_elements());
  if (!h.data.empty()) std::memcpy(h.data.data(), t.data(), h.data.size() * sizeof(float));
  return h;
}

}  // namespace

absl::StatusOr<NodeValues> RunEveryNode(Runtime& runtime, const std::string& name,
                                        const TraceFn& program, const FunctionOptions& options,
                                        const std::vector<ops::HostTensor>& inputs) {
  std::vector<TraceInput> trace_inputs;
  std::vector<TensorView> views;
  for (const ops::HostTensor& t : inputs) {
    TraceInput in;
    for (int64_t d : t.shape) in.shape.push_back(ir::SymExpr(d));
    trace_inputs.push_back(std::move(in));
    views.push_back(TensorView::Dense(t.data.data(), t.shape));
  }
  NodeValues out;
  absl::StatusOr<ir::Graph> traced = Trace(program, trace_inputs, {});
  if (!traced.ok()) return traced.status();
  out.traced = *std::move(traced);
  const std::vector<std::vector<int>> groups =
      MaterializedNodeGroups(out.traced, graph::kMaxOutputs);
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<int>& nodes = groups[g];
    absl::StatusOr<std::unique_ptr<Function>> fn = runtime.JitTraced(
        absl::StrCat(name, " (every node, %", nodes.front(), " to %", nodes.back(), ")"),
        static_cast<int>(inputs.size()), MaterializeNodes(program, nodes), options);
    if (!fn.ok()) return fn.status();
    absl::StatusOr<std::vector<Tensor>> values = (**fn)(views);
    if (!values.ok()) return values.status();
    for (size_t i = 0; i < nodes.size(); ++i) {
      ops::HostTensor value = ToHost((*values)[i]);
      const std::optional<std::vector<int64_t>> want = StaticDims(out.traced.nodes[nodes[i]].shape);
      if (!want.has_value() || *want != value.shape) {
        return absl::FailedPreconditionError(
            absl::StrCat("node %", nodes[i], " (", ir::OpName(out.traced.nodes[nodes[i]].op),
                         "): the debug plan's value has shape ", value.ShapeString(),
                         ", the program traced on the inputs' shapes gives ",
                         ir::ShapeToString(out.traced.nodes[nodes[i]].shape),
                         " (does it trace differently with symbolic shapes?)"));
      }
      out.nodes.push_back(nodes[i]);
      out.values.push_back(std::move(value));
    }
  }
  return out;
}

}  // namespace pto::jit
