#include "jit/numerics/numerics_checker.h"

#include <algorithm>

#include "jit/numerics/locate_op.h"
#include "jit/numerics/non_finite.h"
#include "jit/numerics/numerics_message.h"
#include "ops/host_tensor.h"

namespace pto::jit::numerics {

NumericsChecker::NumericsChecker(const Plan& plan, const ir::Graph& graph,
                                 std::span<void* const> inputs,
                                 const std::vector<bool>& is_constant, CheckedConstants* constants)
    : plan_(plan),
      graph_(graph),
      inputs_(inputs),
      is_constant_(is_constant),
      constants_(constants),
      scan_(BuffersToScan(plan)) {}

absl::Status NumericsChecker::CheckInputs(std::span<const int64_t> symbols) {
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const ir::Node& n = graph_.nodes[i];
    if (n.op != ir::OpKind::kInput || n.dtype != ir::DType::kF32) continue;  // i32: all finite
    const int input = static_cast<int>(n.attrs.index);
    const auto* data = static_cast<const float*>(inputs_[input]);
    const bool constant = constants_ != nullptr && is_constant_[input];
    if (constant && constants_->Checked(input, data)) continue;
    const std::vector<int64_t> shape = NodeShape(graph_, static_cast<int>(i), symbols);
    if (std::optional<NonFinite> f = FindNonFinite(data, ops::NumElements(shape))) {
      return absl::InvalidArgumentError(InputMessage(input, *f, shape));
    }
    if (constant) constants_->MarkChecked(input, data);
  }
  return absl::OkStatus();
}

absl::Status NumericsChecker::BeforeKernel(const KernelLaunch& launch) {
  if (launch.index == 0) return CheckInputs(launch.symbols);
  return absl::OkStatus();
}

const float* NumericsChecker::Memory(const KernelLaunch& launch, int node) const {
  const ir::Node& n = graph_.nodes[node];
  if (n.op == ir::OpKind::kInput) return static_cast<const float*>(inputs_[n.attrs.index]);
  const std::vector<BufferRef>& refs = plan_.kernels[launch.index].buffers;
  for (size_t s = 0; s < refs.size(); ++s) {
    if (refs[s].written || refs[s].node != node) continue;
    // A read buffer that shares memory with a written one was overwritten in place.
    for (size_t w = 0; w < refs.size(); ++w) {
      if (refs[w].written && launch.buffers[w] == launch.buffers[s]) return nullptr;
    }
    return static_cast<const float*>(launch.buffers[s]);
  }
  return nullptr;
}

absl::Status NumericsChecker::AfterKernel(const KernelLaunch& launch) {
  for (const WrittenBuffer& b : scan_[launch.index]) {
    if (graph_.nodes[b.node].dtype != ir::DType::kF32) continue;  // integers are all finite
    const std::vector<int64_t> shape = NodeShape(graph_, b.node, launch.symbols);
    const auto* data = static_cast<const float*>(launch.buffers[b.slot]);
    std::optional<NonFinite> found = FindNonFinite(data, ops::NumElements(shape));
    if (!found.has_value()) continue;
    // The ops of every kernel that wrote the buffer (one, but for a concat's windows).
    std::vector<int> nodes;
    for (int k : b.writers) {
      const std::vector<int>& own = plan_.kernels[k].nodes;
      nodes.insert(nodes.end(), own.begin(), own.end());
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    const BufferRef& ref = plan_.kernels[launch.index].buffers[b.slot];
    KernelFinding f{plan_.kernels[launch.index].name,
                    ref.kind,
                    ref.index,
                    b.node,
                    *found,
                    launch.symbols,
                    FirstNonFiniteOp(graph_, nodes, launch.symbols,
                                     [&](int node) { return Memory(launch, node); })};
    return absl::InvalidArgumentError(KernelMessage(graph_, f));
  }
  return absl::OkStatus();
}

}  // namespace pto::jit::numerics
