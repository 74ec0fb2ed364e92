#include "jit/graph/graph_hash.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cache/checksum.h"

namespace pto::graph {
namespace {

constexpr std::array<uint8_t, 16> kKey = {'p', 't', 'o', '-', 'g', 'r', 'a', 'p',
                                          'h', '-', 'h', 'a', 's', 'h', '-', '1'};

// Appends fixed-width little-endian integers.
class ByteWriter {
 public:
  void U8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { Fixed(v, 4); }
  void U64(uint64_t v) { Fixed(v, 8); }
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void Count(size_t n) { U32(static_cast<uint32_t>(n)); }
  void Raw(std::string_view s) { bytes_.append(s); }
  const std::string& bytes() const { return bytes_; }

 private:
  void Fixed(uint64_t v, int width) {
    for (int i = 0; i < width; ++i) bytes_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string bytes_;
};

// Step 1: node ids in canonical order (post-order DFS from the outputs, then input nodes).
std::vector<int> CanonicalOrder(const ir::Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<bool> seen(n, false);
  std::vector<int> order;
  std::vector<std::pair<int, size_t>> stack;  // node id, next input to visit
  auto visit = [&](int root) {
    assert(root >= 0 && root < n);
    if (seen[root]) return;
    seen[root] = true;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      const int id = stack.back().first;
      const std::vector<int>& inputs = g.nodes[id].inputs;
      if (stack.back().second < inputs.size()) {
        const int in = inputs[stack.back().second++];
        assert(in >= 0 && in < n);
        if (!seen[in]) {
          seen[in] = true;
          stack.push_back({in, 0});
        }
      } else {
        order.push_back(id);
        stack.pop_back();
      }
    }
  };
  for (int id : g.outputs) visit(id);
  std::vector<std::pair<int64_t, int>> inputs;  // input index, node id
  for (int id = 0; id < n; ++id) {
    if (g.nodes[id].op == ir::OpKind::kInput) inputs.push_back({g.nodes[id].attrs.index, id});
  }
  std::sort(inputs.begin(), inputs.end());
  for (const auto& [index, id] : inputs) visit(id);
  return order;
}

// Step 2: canonical id of each symbol (-1 when unused by the nodes in `order`).
std::vector<int> CanonicalSymbols(const ir::Graph& g, const std::vector<int>& order) {
  std::vector<int> canonical(g.symbols.size(), -1);
  int next = 0;
  for (int id : order) {
    for (const ir::SymExpr& dim : g.nodes[id].shape) {
      std::vector<int> fresh;
      for (int s : dim.Symbols()) {
        assert(s >= 0 && s < static_cast<int>(g.symbols.size()));
        if (canonical[s] < 0) fresh.push_back(s);
      }
      // Ascending id already; stable keeps it as the last tie-break.
      std::stable_sort(fresh.begin(), fresh.end(), [&](int a, int b) {
        return std::pair(g.symbols[a].min, g.symbols[a].max) <
               std::pair(g.symbols[b].min, g.symbols[b].max);
      });
      for (int s : fresh) canonical[s] = next++;
    }
  }
  return canonical;
}

void WriteNode(const ir::Node& node, const std::vector<int>& position,
               std::span<const std::optional<ir::SymExpr>> renumber, ByteWriter& w) {
  w.U8(static_cast<uint8_t>(node.op));
  w.U8(static_cast<uint8_t>(node.dtype));
  const ir::Attrs& a = node.attrs;
  w.I64(a.index);
  w.U64(std::bit_cast<uint64_t>(a.scalar));
  w.I64(a.axis);
  w.U8(a.keepdims);
  w.U8(a.transpose_a);
  w.U8(a.transpose_b);
  w.U32(std::bit_cast<uint32_t>(a.eps));
  w.I64(a.start);
  w.I64(a.end);
  w.I64(a.step);
  w.U8(static_cast<uint8_t>(a.dtype));
  w.Count(a.ints.size());
  for (int64_t v : a.ints) w.I64(v);
  w.Count(node.shape.size());
  for (const ir::SymExpr& dim : node.shape) {
    const ir::SymExpr canonical = dim.Substitute(renumber);
    w.Count(canonical.terms().size());
    for (const auto& [mono, coeff] : canonical.terms()) {
      w.I64(coeff);
      w.Count(mono.size());
      for (int s : mono) w.U32(static_cast<uint32_t>(s));
    }
  }
  w.Count(node.inputs.size());
  for (int in : node.inputs) w.U32(static_cast<uint32_t>(position[in]));
}

}  // namespace

std::string GraphHash::Hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[15 - i] = kDigits[(hi >> (4 * i)) & 0xf];
    out[31 - i] = kDigits[(lo >> (4 * i)) & 0xf];
  }
  return out;
}

GraphHash CanonicalGraphHash(const ir::Graph& graph) {
  const std::vector<int> order = CanonicalOrder(graph);
  std::vector<int> position(graph.nodes.size(), -1);
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int>(i);
  const std::vector<int> canonical = CanonicalSymbols(graph, order);
  std::vector<std::optional<ir::SymExpr>> renumber(canonical.size());
  std::vector<int> used;  // original ids by canonical id
  for (size_t s = 0; s < canonical.size(); ++s) {
    if (canonical[s] < 0) continue;
    renumber[s] = ir::SymExpr::Symbol(canonical[s]);
    if (static_cast<size_t>(canonical[s]) >= used.size()) used.resize(canonical[s] + 1);
    used[canonical[s]] = static_cast<int>(s);
  }

  ByteWriter w;
  w.Raw("ptograph");
  w.U32(kGraphHashVersion);
  w.Count(order.size());
  for (int id : order) WriteNode(graph.nodes[id], position, renumber, w);
  w.Count(graph.outputs.size());
  for (int id : graph.outputs) w.U32(static_cast<uint32_t>(position[id]));
  w.I64(graph.num_inputs);
  w.Count(used.size());
  for (int s : used) {
    w.I64(graph.symbols[s].min);
    w.I64(graph.symbols[s].max);
  }
  const std::array<uint64_t, 2> h = cache::SipHash128(kKey, w.bytes());
  return GraphHash{.hi = h[1], .lo = h[0]};
}

}  // namespace pto::graph
