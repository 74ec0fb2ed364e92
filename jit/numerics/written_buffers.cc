#include "jit/numerics/written_buffers.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace pto::jit::numerics {

std::vector<std::vector<WrittenBuffer>> BuffersToScan(const Plan& plan) {
  // A buffer is its binding (kind and index) and the node it holds: an arena slot holds
  // several nodes over a run.
  using Key = std::tuple<ir::BufferKind, int, int>;
  std::map<Key, std::vector<std::pair<int, int>>> writes;  // key -> (kernel, slot) in order
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const std::vector<BufferRef>& refs = plan.kernels[k].buffers;
    for (size_t s = 0; s < refs.size(); ++s) {
      if (!refs[s].written || refs[s].node < 0) continue;
      writes[Key{refs[s].kind, refs[s].index, refs[s].node}].emplace_back(static_cast<int>(k),
                                                                          static_cast<int>(s));
    }
  }
  std::vector<std::vector<WrittenBuffer>> out(plan.kernels.size());
  for (const auto& [key, list] : writes) {
    WrittenBuffer b;
    b.slot = list.back().second;
    b.node = std::get<2>(key);
    for (const auto& [kernel, slot] : list) b.writers.push_back(kernel);
    out[list.back().first].push_back(std::move(b));
  }
  for (std::vector<WrittenBuffer>& kernel : out) {
    std::sort(kernel.begin(), kernel.end(),
              [](const WrittenBuffer& a, const WrittenBuffer& b) { return a.slot < b.slot; });
  }
  return out;
}

std::vector<int64_t> NodeShape(const ir::Graph& graph, int node, std::span<const int64_t> symbols) {
  std::vector<int64_t> shape;
  for (const ir::SymExpr& d : graph.nodes[node].shape) shape.push_back(d.Evaluate(symbols));
  return shape;
}

}  // namespace pto::jit::numerics
