#include "jit/ir/tile_graph.h"

namespace pto::ir {

void BufferLifetimes(const TileGraph& tiles, std::vector<int>* first, std::vector<int>* last) {
  const size_t nb = tiles.buffers.size();
  first->assign(nb, -1);
  last->assign(nb, -1);
  for (int c = 0; c < static_cast<int>(tiles.calls.size()); ++c) {
    for (int b : tiles.calls[c].buffers) {
      if ((*first)[b] < 0) (*first)[b] = c;
      (*last)[b] = c;
    }
  }
}

std::string TileGraph::ToString() const {
  std::vector<std::string> names;
  for (const SymbolInfo& s : symbols) names.push_back(s.name);
  std::string out;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& b = buffers[i];
    const char* kind = b.kind == BufferKind::kInput    ? "input"
                       : b.kind == BufferKind::kOutput ? "output"
                       : b.kind == BufferKind::kPacked ? "packed input"
                                                       : "temp";
    out += "buf" + std::to_string(i) + ": " + kind;
    if (b.kind != BufferKind::kTemp) out += " " + std::to_string(b.index);
    out += " " + std::string(DTypeName(b.dtype)) + "[" + b.elements.ToString(names) + "]";
    if (!b.label.empty()) out += "  // " + b.label;
    out += "\n";
  }
  for (const KernelCall& call : calls) {
    out += KernelToString(call.kernel, names);
    out += "  buffers:";
    for (size_t s = 0; s < call.buffers.size(); ++s) {
      out += " slot" + std::to_string(s) + "=buf" + std::to_string(call.buffers[s]);
    }
    out += "\n";
  }
  return out;
}

}  // namespace pto::ir
