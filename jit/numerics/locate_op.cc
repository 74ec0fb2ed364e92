#include "jit/numerics/locate_op.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/numerics/written_buffers.h"
#include "ops/host_tensor.h"
#include "ops/reference.h"

namespace pto::jit::numerics {
namespace {

class Rerun {
 public:
  Rerun(const ir::Graph& graph, std::span<const int> nodes, std::span<const int64_t> symbols,
        const std::function<const float*(int)>& memory)
      : graph_(graph), nodes_(nodes), symbols_(symbols), memory_(memory) {}

  // The value of `node`, computing what it needs first (an explicit stack: a chain of views
  // or of another kernel's ops may be long).
  absl::StatusOr<const ops::HostTensor*> Value(int node) {
    std::vector<int> stack = {node};
    while (!stack.empty()) {
      const int n = stack.back();
      if (values_.count(n)) {
        stack.pop_back();
        continue;
      }
      if (!Computed(n)) {
        if (const float* data = memory_(n)) {
          ops::HostTensor t;
          t.shape = NodeShape(graph_, n, symbols_);
          const int64_t count = ops::NumElements(t.shape);
          if (graph_.nodes[n].dtype == ir::DType::kI32) {  // the buffer holds int32
            std::vector<int32_t> ints(count);
            if (count > 0) std::memcpy(ints.data(), data, count * sizeof(int32_t));
            t = ops::HostTensor::I32(t.shape, std::move(ints));
          } else {
            t.data.assign(data, data + count);
          }
          values_[n] = std::move(t);
          stack.pop_back();
          continue;
        }
      }
      const ir::Node& g = graph_.nodes[n];
      if (g.op == ir::OpKind::kInput) {
        return absl::InternalError(
            absl::StrCat("check_numerics: input node ", n, " not in memory"));
      }
      bool ready = true;
      for (int in : g.inputs) {
        if (!values_.count(in)) {
          stack.push_back(in);
          ready = false;
        }
      }
      if (!ready) continue;
      std::vector<const ops::HostTensor*> operands;
      for (int in : g.inputs) operands.push_back(&values_.at(in));
      absl::StatusOr<ops::HostTensor> v = ops::EvaluateOp(g.op, g.attrs, operands);
      if (!v.ok()) return v.status();
      values_[n] = *std::move(v);
      stack.pop_back();
    }
    return &values_.at(node);
  }

 private:
  bool Computed(int node) const { return std::binary_search(nodes_.begin(), nodes_.end(), node); }

  const ir::Graph& graph_;
  std::span<const int> nodes_;
  std::span<const int64_t> symbols_;
  const std::function<const float*(int)>& memory_;
  std::map<int, ops::HostTensor> values_;
};

}  // namespace

absl::StatusOr<std::optional<OpFinding>> FirstNonFiniteOp(
    const ir::Graph& graph, std::span<const int> nodes, std::span<const int64_t> symbols,
    const std::function<const float*(int node)>& memory) {
  Rerun rerun(graph, nodes, symbols, memory);
  for (int node : nodes) {
    absl::StatusOr<const ops::HostTensor*> v = rerun.Value(node);
    if (!v.ok()) return v.status();
    const std::vector<float>& data = (*v)->data;
    if (std::optional<NonFinite> f = FindNonFinite(data.data(), static_cast<int64_t>(data.size())))
      return OpFinding{node, *f};
  }
  return std::nullopt;
}

}  // namespace pto::jit::numerics
