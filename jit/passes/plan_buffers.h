// Pass (level 4, execution graph): liveness-based reuse of temporary buffers. Temps whose
// lifetimes (first write .. last read, in kernel-call order) do not overlap share a slot of a
// per-call arena; a slot is as large as its largest member at the call's sizes.
#ifndef PTO_JIT_PASSES_PLAN_BUFFERS_H_
#define PTO_JIT_PASSES_PLAN_BUFFERS_H_

#include <vector>

#include "jit/ir/tile_graph.h"

namespace pto::jit {

struct BufferPlan {
  std::vector<int> slot_of;                 // TileGraph buffer -> arena slot (-1: not a temp)
  std::vector<std::vector<int>> slot_members;
};

BufferPlan PlanBuffers(const ir::TileGraph& tiles);
std::string BufferPlanToString(const ir::TileGraph& tiles, const BufferPlan& plan);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_PLAN_BUFFERS_H_
