#include "tools/pto/graph_program.h"

#include <map>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/graph/graph_text.h"
#include "jit/trace.h"

namespace pto::tools {
namespace {

// A traced input against its declaration: the rank and every constant dim must be the
// declared ones (a symbolic dim's value is the runtime's to bind).
absl::Status CheckTracedInput(const ir::Graph& graph, const ir::Node& declared,
                              const std::string& name, const ir::Shape& traced,
                              std::span<const std::string> traced_symbols) {
  auto mismatch = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input ", declared.attrs.index, " (", name, "): shape ",
        ir::ShapeToString(traced, traced_symbols), " does not match the declared shape ",
        ir::ShapeToString(declared.shape, graph.SymbolNames()), ": ", why));
  };
  if (traced.size() != declared.shape.size()) {
    return mismatch(absl::StrCat("rank ", traced.size(), ", declared ", declared.shape.size()));
  }
  for (size_t axis = 0; axis < traced.size(); ++axis) {
    const std::optional<int64_t> want = declared.shape[axis].AsConstant();
    if (!want.has_value() || traced[axis] == ir::SymExpr(*want)) continue;
    return mismatch(absl::StrCat("dim ", axis, " is ", traced[axis].ToString(traced_symbols),
                                 ", declared ", *want));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GraphProgram> LoadGraphProgram(const std::string& path) {
  absl::StatusOr<ir::Graph> graph = graph::LoadGraphFile(path);
  if (!graph.ok()) return graph.status();
  return GraphProgramFromGraph(*std::move(graph));
}

GraphProgram GraphProgramFromGraph(ir::Graph graph) {
  GraphProgram p;
  p.graph = std::move(graph);
  p.input_names.resize(p.graph.num_inputs);
  // Precompile and Dump trace from shapes: the graph's dtypes (i32 labels, say) apply.
  p.options.input_dtypes.assign(p.graph.num_inputs, DType::kF32);
  for (const ir::Node& n : p.graph.nodes) {
    if (n.op != ir::OpKind::kInput) continue;
    const int index = static_cast<int>(n.attrs.index);
    p.input_names[index] = n.name.empty() ? absl::StrCat("input", index) : n.name;
    p.options.input_dtypes[index] = static_cast<DType>(n.dtype);
    for (size_t axis = 0; axis < n.shape.size(); ++axis) {
      if (const std::optional<int> symbol = n.shape[axis].AsSymbol()) {
        const ir::SymbolInfo& s = p.graph.symbols[*symbol];
        p.options.dynamic.push_back({index, static_cast<int>(axis), Dim(s.name, s.min, s.max)});
      }
    }
  }
  p.graph_node_of_trace.resize(p.graph.num_inputs);
  for (size_t i = 0; i < p.graph.nodes.size(); ++i) {
    const ir::Node& n = p.graph.nodes[i];
    if (n.op == ir::OpKind::kInput) {
      p.graph_node_of_trace[n.attrs.index] = static_cast<int>(i);
    } else {
      p.graph_node_of_trace.push_back(static_cast<int>(i));
    }
  }
  for (size_t o = 0; o < p.graph.outputs.size(); ++o) {
    const ir::Node& n = p.graph.nodes[p.graph.outputs[o]];
    p.output_names.push_back(n.name.empty() ? absl::StrCat("output", o) : n.name);
  }
  p.trace = [graph = p.graph, names = p.input_names](std::span<const Value> in) {
    std::vector<Value> values(graph.nodes.size());
    detail::TraceState* state = in.empty() ? detail::TraceState::Current() : in[0].state().get();
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const ir::Node& n = graph.nodes[i];
      if (n.op == ir::OpKind::kInput) {
        const Value& v = in[n.attrs.index];
        if (absl::Status s =
                CheckTracedInput(graph, n, names[n.attrs.index], state->graph().nodes[v.id()].shape,
                                 state->graph().SymbolNames());
            !s.ok()) {
          state->Fail(std::move(s));
          return std::vector<Value>();
        }
        values[i] = v;
        continue;
      }
      std::vector<Value> args;
      for (int a : n.inputs) args.push_back(values[a]);
      values[i] = state->AddNode(n.op, n.attrs, args);
    }
    std::vector<Value> outs;
    for (int o : graph.outputs) outs.push_back(values[o]);
    return outs;
  };
  return p;
}

absl::StatusOr<std::vector<std::string>> BindNamedFiles(const std::vector<std::string>& flags,
                                                        const std::vector<std::string>& names,
                                                        const std::string& what) {
  std::vector<std::string> files(names.size());
  for (const std::string& f : flags) {
    const size_t eq = f.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", what, " ", f, ": expected NAME=FILE.npy"));
    }
    const std::string name = f.substr(0, eq);
    size_t i = 0;
    while (i < names.size() && names[i] != name) ++i;
    if (i == names.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", what, " ", name, ": the graph has no ", what,
                       " of that name (it has: ", absl::StrJoin(names, ", "), ")"));
    }
    if (!files[i].empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--", what, " ", name, " is given twice"));
    }
    files[i] = f.substr(eq + 1);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (files[i].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("missing --", what, " ", names[i], "=FILE.npy"));
    }
  }
  return files;
}

}  // namespace pto::tools
