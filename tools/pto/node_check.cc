#include "tools/pto/node_check.h"

#include <algorithm>
#include <cstdio>
#include <span>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "jit/materialize_every_node.h"
#include "ops/reference.h"

namespace pto::tools {
namespace {

std::string Number(double v) { return v == 0 ? "0" : absl::StrFormat("%.2e", v); }

}  // namespace

absl::StatusOr<std::vector<NodeCheck>> CheckEveryNode(Runtime& runtime, const GraphProgram& program,
                                                      const std::string& name,
                                                      const std::vector<ops::HostTensor>& inputs) {
  absl::StatusOr<jit::NodeValues> got =
      jit::RunEveryNode(runtime, name, program.trace, program.options, inputs);
  if (!got.ok()) return got.status();
  if (got->traced.nodes.size() != program.graph_node_of_trace.size()) {
    return absl::InternalError(absl::StrCat("the replay of the graph traced ",
                                            got->traced.nodes.size(), " nodes for its ",
                                            program.graph_node_of_trace.size()));
  }
  ir::Graph every = got->traced;
  every.outputs = got->nodes;
  absl::StatusOr<std::vector<ops::HostTensor>> want = ops::RunReference(every, inputs);
  if (!want.ok()) return want.status();
  // pto's value of every trace node: the inputs as given, the others from the debug plan.
  std::vector<const ops::HostTensor*> value(every.nodes.size(), nullptr);
  for (size_t id = 0; id < every.nodes.size(); ++id) {
    if (every.nodes[id].op == ir::OpKind::kInput) value[id] = &inputs[every.nodes[id].attrs.index];
  }
  for (size_t i = 0; i < got->nodes.size(); ++i) value[got->nodes[i]] = &got->values[i];
  std::vector<NodeCheck> rows;
  for (size_t i = 0; i < got->nodes.size(); ++i) {
    const int id = got->nodes[i];
    const ir::Node& n = every.nodes[id];
    std::vector<const ops::HostTensor*> args;
    for (int a : n.inputs) args.push_back(value[a]);
    absl::StatusOr<ops::HostTensor> local = ops::EvaluateOp(n.op, n.attrs, args);
    if (!local.ok()) return local.status();
    NodeCheck row;
    // The replay adds one trace node per graph node (GraphProgram::graph_node_of_trace).
    row.node = program.graph_node_of_trace[id];
    row.name = program.graph.nodes[row.node].name;
    row.op = n.op;
    row.shape = got->values[i].shape;
    row.local = ops::MaxErrors(got->values[i], *local);
    row.total = ops::MaxErrors(got->values[i], (*want)[i]);
    row.tolerance = ops::NodeTolerance(n.op, n.attrs, args);
    row.ok = ops::AllClose(got->values[i], *local, row.tolerance, nullptr);
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(),
            [](const NodeCheck& a, const NodeCheck& b) { return a.node < b.node; });
  return rows;
}

std::string NodeCheckText(const std::vector<NodeCheck>& rows) {
  std::string out =
      "pto run --check: every node computed by a debug plan that materializes each one in a\n"
      "buffer of its own (slower than the real plan; values the same up to the order of float\n"
      "operations), against the ops/ reference (double, rounded to f32 per node) on the same\n"
      "inputs:\n"
      "  local: the node's op run by the reference on pto's values of its inputs (that op's own\n"
      "         error; ok when |pto - ref| <= tol_abs + tol_rel * |ref| for every element)\n"
      "  total: the whole graph run by the reference from the inputs (earlier nodes' errors too)\n"
      "  abs = max |pto - ref|, rel = max |pto - ref| / max(|ref|, FLT_MIN), over the elements\n";
  std::vector<std::vector<std::string>> table = {{"node", "name", "op", "shape", "local_abs",
                                                  "local_rel", "total_abs", "total_rel", "tol_abs",
                                                  "tol_rel", "verdict"}};
  int ok = 0;
  for (const NodeCheck& r : rows) {
    ok += r.ok ? 1 : 0;
    table.push_back({absl::StrCat(r.node), r.name.empty() ? "-" : r.name, ir::OpName(r.op),
                     absl::StrCat("[", absl::StrJoin(r.shape, ","), "]"), Number(r.local.max_abs),
                     Number(r.local.max_rel), Number(r.total.max_abs), Number(r.total.max_rel),
                     Number(r.tolerance.abs), Number(r.tolerance.rel), r.ok ? "ok" : "EXCEEDS"});
  }
  std::vector<size_t> width(table[0].size(), 0);
  for (const auto& line : table) {
    for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  }
  for (const auto& line : table) {
    std::string text;
    for (size_t c = 0; c < line.size(); ++c) {
      // The node id right-aligned, the rest left-aligned.
      const std::string pad(width[c] - line[c].size(), ' ');
      absl::StrAppend(&text, c == 0 ? "" : "  ", c == 0 ? pad + line[c] : line[c],
                      c == 0 || c + 1 == line.size() ? "" : pad);
    }
    absl::StrAppend(&out, text, "\n");
  }
  absl::StrAppend(&out, ok, " of ", rows.size(), " nodes within tolerance\n");
  return out;
}

int RunNodeCheck(Runtime& runtime, const GraphProgram& program, const std::string& name,
                 const std::vector<NpyArray>& inputs) {
  // An NpyArray is a HostTensor of the file's dtype.
  absl::StatusOr<std::vector<NodeCheck>> rows = CheckEveryNode(runtime, program, name, inputs);
  if (!rows.ok()) {
    std::fprintf(stderr, "pto run: --check: %s\n", std::string(rows.status().message()).c_str());
    return 1;
  }
  std::fputs(NodeCheckText(*rows).c_str(), stdout);
  int exceeds = 0;
  for (const NodeCheck& r : *rows) exceeds += r.ok ? 0 : 1;
  if (exceeds == 0) return 0;
  std::fprintf(stderr, "pto run: --check: %d of %zu nodes exceed their tolerance\n", exceeds,
               rows->size());
  return 1;
}

}  // namespace pto::tools
