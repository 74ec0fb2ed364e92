#include "jit/passes/plan_buffers.h"

#include <string>

namespace pto::jit {

BufferPlan PlanBuffers(const ir::TileGraph& tiles) {
  const int nb = static_cast<int>(tiles.buffers.size());
  std::vector<int> first(nb, -1), last(nb, -1);
  for (int c = 0; c < static_cast<int>(tiles.calls.size()); ++c) {
    for (int b : tiles.calls[c].buffers) {
      if (first[b] < 0) first[b] = c;
      last[b] = c;
    }
  }
  BufferPlan plan;
  plan.slot_of.assign(nb, -1);
  std::vector<int> slot_free_after;  // last call that uses the slot's current member
  for (int b = 0; b < nb; ++b) {
    if (tiles.buffers[b].kind != ir::BufferKind::kTemp || first[b] < 0) continue;
    int slot = -1;
    for (int s = 0; s < static_cast<int>(slot_free_after.size()); ++s) {
      if (slot_free_after[s] < first[b]) {
        slot = s;
        break;
      }
    }
    if (slot < 0) {
      slot = static_cast<int>(slot_free_after.size());
      slot_free_after.push_back(-1);
      plan.slot_members.emplace_back();
    }
    slot_free_after[slot] = last[b];
    plan.slot_of[b] = slot;
    plan.slot_members[slot].push_back(b);
  }
  return plan;
}

std::string BufferPlanToString(const ir::TileGraph& tiles, const BufferPlan& plan) {
  std::vector<std::string> names;
  for (const ir::SymbolInfo& s : tiles.symbols) names.push_back(s.name);
  std::string out;
  for (size_t s = 0; s < plan.slot_members.size(); ++s) {
    out += "slot" + std::to_string(s) + ":";
    for (int b : plan.slot_members[s]) {
      out += " buf" + std::to_string(b) + "[" + tiles.buffers[b].elements.ToString(names) + "]";
    }
    out += "\n";
  }
  return out;
}

}  // namespace pto::jit
