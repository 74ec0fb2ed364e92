// Pass (level 4, execution graph): liveness-based reuse of temporary buffers. Temps whose
// lifetimes (first write .. last read, in kernel-call order) do not overlap share a slot of a
// per-call arena; a slot is as large as its largest member at the call's sizes. A call's
// in-place pairs (ir::KernelCall::in_place, from mark_in_place) share one slot: the output
// takes over the input's memory at that call. Among the slots free at a buffer's first write,
// the best fit is taken: the smallest that is already large enough, else the largest (the
// least growth); sizes are compared at the symbols' representative values. A program that
// needs more than kMaxArenaSlots slots at once (jit/plan.h) gets a plan of kMaxArenaSlots + 1
// slots, the last empty, which the pipeline rejects: planning stops there, so its work stays
// linear in the buffers.
#ifndef PTO_JIT_PASSES_PLAN_BUFFERS_H_
#define PTO_JIT_PASSES_PLAN_BUFFERS_H_

#include <string>
#include <vector>

#include "jit/ir/tile_graph.h"

namespace pto::jit {

struct BufferPlan {
  std::vector<int> slot_of;  // TileGraph buffer -> arena slot (-1: not a temp)
  std::vector<std::vector<int>> slot_members;
  // TileGraph buffer -> the buffer whose memory it is written over in place (-1: none).
  std::vector<int> in_place_of;
};

BufferPlan PlanBuffers(const ir::TileGraph& tiles);
// One line per slot: "slotN: bufA[elements] bufB[elements] (in place of bufA) ...".
std::string BufferPlanToString(const ir::TileGraph& tiles, const BufferPlan& plan);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_PLAN_BUFFERS_H_
