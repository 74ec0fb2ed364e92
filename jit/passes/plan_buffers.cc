#include "jit/passes/plan_buffers.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "jit/plan.h"

namespace pto::jit {
namespace {

int Find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// A value per symbol at which sizes are compared: the top of its range when the range is
// bounded (a shape-class bucket), else a typical size.
std::vector<int64_t> RepresentativeSymbols(const ir::TileGraph& tiles) {
  constexpr int64_t kTypical = 64;
  std::vector<int64_t> values;
  for (const ir::SymbolInfo& s : tiles.symbols) {
    values.push_back(s.max != INT64_MAX ? s.max : std::max(s.min, kTypical));
  }
  return values;
}

}  // namespace

BufferPlan PlanBuffers(const ir::TileGraph& tiles) {
  const int nb = static_cast<int>(tiles.buffers.size());
  std::vector<int> first, last;
  ir::BufferLifetimes(tiles, &first, &last);
  BufferPlan plan;
  plan.slot_of.assign(nb, -1);
  plan.in_place_of.assign(nb, -1);
  auto planned = [&](int b) {
    return tiles.buffers[b].kind == ir::BufferKind::kTemp && first[b] >= 0;
  };

  // In-place pairs join their buffers into one group that lives from the first member's
  // write to the last member's read.
  std::vector<int> parent(nb);
  std::iota(parent.begin(), parent.end(), 0);
  for (const ir::KernelCall& call : tiles.calls) {
    for (auto [out, in] : call.in_place) {
      if (!planned(out) || !planned(in)) continue;
      plan.in_place_of[out] = in;
      parent[Find(parent, out)] = Find(parent, in);
    }
  }
  const std::vector<int64_t> symbols = RepresentativeSymbols(tiles);
  std::vector<int> group_first(nb, -1), group_last(nb, -1);
  std::vector<int64_t> group_size(nb, 0);
  std::vector<std::vector<int>> group_members(nb);
  for (int b = 0; b < nb; ++b) {
    if (!planned(b)) continue;
    const int g = Find(parent, b);
    group_first[g] = group_first[g] < 0 ? first[b] : std::min(group_first[g], first[b]);
    group_last[g] = std::max(group_last[g], last[b]);
    group_size[g] = std::max(group_size[g], tiles.buffers[b].elements.Evaluate(symbols));
    group_members[g].push_back(b);
  }
  std::vector<int> order;
  for (int g = 0; g < nb; ++g) {
    if (!group_members[g].empty()) order.push_back(g);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return group_first[a] < group_first[b]; });

  std::vector<int> slot_free_after;  // last call that uses the slot's current member
  std::vector<int64_t> slot_size;    // at the representative symbol values
  for (int g : order) {
    int fit = -1, largest = -1;
    for (int s = 0; s < static_cast<int>(slot_free_after.size()); ++s) {
      if (slot_free_after[s] >= group_first[g]) continue;
      if (slot_size[s] >= group_size[g] && (fit < 0 || slot_size[s] < slot_size[fit])) fit = s;
      if (largest < 0 || slot_size[s] > slot_size[largest]) largest = s;
    }
    int slot = fit >= 0 ? fit : largest;
    if (slot < 0 && static_cast<int>(slot_free_after.size()) == kMaxArenaSlots) {
      // One slot more than a plan can hold: the pipeline rejects the program, and planning on
      // would cost the buffers times the slots.
      plan.slot_members.emplace_back();
      break;
    }
    if (slot < 0) {
      slot = static_cast<int>(slot_free_after.size());
      slot_free_after.push_back(-1);
      slot_size.push_back(0);
      plan.slot_members.emplace_back();
    }
    slot_free_after[slot] = group_last[g];
    slot_size[slot] = std::max(slot_size[slot], group_size[g]);
    for (int b : group_members[g]) {
      plan.slot_of[b] = slot;
      plan.slot_members[slot].push_back(b);
    }
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
      if (b < static_cast<int>(plan.in_place_of.size()) && plan.in_place_of[b] >= 0) {
        out += " (in place of buf" + std::to_string(plan.in_place_of[b]) + ")";
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace pto::jit
