#include "jit/pipeline_text.h"

#include <array>

#include "absl/strings/str_cat.h"

namespace pto::jit {

std::string FusionGroupsText(const ir::Graph& graph, const FusionGroups& groups) {
  // A group is keyed by its anchor (a node precedes the nodes it absorbs).
  std::vector<std::vector<int>> members(graph.nodes.size());
  std::string inline_nodes, stored_inline, views;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const int id = static_cast<int>(n);
    switch (groups.role[n]) {
      case NodeRole::kRoot:
      case NodeRole::kFusedAnchor:
      case NodeRole::kAbsorbed:
        members[groups.anchor[n] >= 0 ? groups.anchor[n] : id].push_back(id);
        break;
      case NodeRole::kInline:
        absl::StrAppend(&inline_nodes, " %", id);
        break;
      case NodeRole::kStoredInline:
        absl::StrAppend(&stored_inline, " %", id);
        break;
      case NodeRole::kView:
        absl::StrAppend(&views, " %", id);
        break;
      case NodeRole::kInput:
      case NodeRole::kConstant:
        break;
    }
  }
  std::string out;
  for (size_t n = 0; n < members.size(); ++n) {
    if (members[n].empty()) continue;
    absl::StrAppend(&out, "kernel of %", n, " (", ir::OpName(graph.nodes[n].op), "):");
    for (int m : members[n]) {
      absl::StrAppend(
          &out, " %", m,
          m < static_cast<int>(groups.stored.size()) && groups.stored[m] ? " (stored)" : "");
    }
    absl::StrAppend(&out, "\n");
  }
  if (!inline_nodes.empty())
    absl::StrAppend(&out, "inlined in their consumer:", inline_nodes, "\n");
  if (!stored_inline.empty()) {
    absl::StrAppend(&out, "inlined and stored by their consumer:", stored_inline, "\n");
  }
  if (!views.empty()) absl::StrAppend(&out, "views:", views, "\n");
  return out;
}

std::string BlockScheduleText(const ir::Graph& graph, const ir::TileGraph& tiles, int threads) {
  std::string out;
  const std::vector<std::string> names = graph.SymbolNames();
  for (const ir::KernelCall& c : tiles.calls) {
    const std::array<ir::SymExpr, 2> grid = ir::KernelGrid(c.kernel);
    absl::StrAppend(&out, c.kernel.name, ": grid [", grid[0].ToString(names), ", ",
                    grid[1].ToString(names), "] grain [", c.kernel.config.tile_rows, ", ",
                    c.kernel.config.tile_cols, "] work/cell ", c.work_per_cell.ToString(names),
                    " threads ", threads, "\n");
  }
  return out;
}

std::string ExecutionText(const ir::TileGraph& tiles, const BufferPlan& buffers) {
  std::string out = "buffers:\n" + BufferPlanToString(tiles, buffers) + "calls:\n";
  for (const ir::KernelCall& c : tiles.calls) {
    absl::StrAppend(&out, "  ", c.kernel.name, "(");
    for (size_t s = 0; s < c.buffers.size(); ++s) {
      const ir::Buffer& b = tiles.buffers[c.buffers[s]];
      const char* kind = b.kind == ir::BufferKind::kInput    ? "in"
                         : b.kind == ir::BufferKind::kOutput ? "out"
                         : b.kind == ir::BufferKind::kPacked ? "packed in"
                                                             : "slot";
      const int index = b.kind == ir::BufferKind::kTemp ? buffers.slot_of[c.buffers[s]] : b.index;
      absl::StrAppend(&out, s ? ", " : "", kind, index);
    }
    absl::StrAppend(&out, ")\n");
  }
  return out + InPlaceOutputsText(tiles);
}

std::string InPlaceOutputText(const ir::InPlaceOutputPlan& d) {
  return absl::StrCat("output ", d.output, " over input ", d.input, ": ",
                      d.in_place ? "in place" : "copied after the input's last reader", " (",
                      d.reason, ")");
}

std::string InPlaceOutputsText(const ir::TileGraph& tiles) {
  if (tiles.in_place_outputs.empty()) return "";
  std::string out = "in-place outputs:\n";
  for (const ir::InPlaceOutputPlan& d : tiles.in_place_outputs) {
    absl::StrAppend(&out, "  ", InPlaceOutputText(d), "\n");
  }
  return out;
}

}  // namespace pto::jit
