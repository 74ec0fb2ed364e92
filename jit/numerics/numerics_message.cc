#include "jit/numerics/numerics_message.h"

#include "absl/strings/str_cat.h"
#include "jit/numerics/written_buffers.h"

namespace pto::jit::numerics {
namespace {

std::string At(const NonFinite& f, std::span<const int64_t> shape) {
  return absl::StrCat("element ", f.index, " ", MultiIndexString(f.index, shape));
}

std::string NodeName(const ir::Graph& graph, int node) {
  return absl::StrCat("node ", node, ", ", ir::OpName(graph.nodes[node].op));
}

}  // namespace

std::string InputMessage(int input, const NonFinite& found, std::span<const int64_t> shape) {
  return absl::StrCat("check_numerics: input ", input, " holds ", NonFiniteName(found.value),
                      " at ", At(found, shape));
}

std::string KernelMessage(const ir::Graph& graph, const KernelFinding& f) {
  const std::string buffer = f.kind == ir::BufferKind::kOutput ? absl::StrCat("output ", f.index)
                                                               : std::string("an intermediate");
  std::string out =
      absl::StrCat("check_numerics: kernel ", f.kernel, " wrote ", NonFiniteName(f.found.value),
                   " to ", buffer, " (", NodeName(graph, f.node), ") at ",
                   At(f.found, NodeShape(graph, f.node, f.symbols)), "; ");
  if (!f.op.ok()) {
    absl::StrAppend(&out,
                    "its ops could not be re-run through the reference: ", f.op.status().message());
  } else if (!f.op->has_value()) {
    absl::StrAppend(&out, "none of its ops gives a non-finite value when re-run through the ",
                    "reference (its approximations differ there)");
  } else {
    const OpFinding& op = **f.op;
    absl::StrAppend(&out, "first produced by node ", op.node, " (",
                    ir::OpName(graph.nodes[op.node].op), "): ", NonFiniteName(op.first.value),
                    " at its ", At(op.first, NodeShape(graph, op.node, f.symbols)),
                    " when the kernel's ops are re-run through the reference");
  }
  return out;
}

}  // namespace pto::jit::numerics
