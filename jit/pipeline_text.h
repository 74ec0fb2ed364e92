// The printed forms of the pipeline's levels that no IR prints by itself: the fusion groups,
// the block schedule (one line per kernel) and the execution graph (buffer slots and calls).
// The pass log (PipelineOptions::log_passes) and `pto dump --stage` print the same text.
#ifndef PTO_JIT_PIPELINE_TEXT_H_
#define PTO_JIT_PIPELINE_TEXT_H_

#include <string>

#include "jit/ir/graph.h"
#include "jit/ir/tile_graph.h"
#include "jit/passes/fusion_groups.h"
#include "jit/passes/plan_buffers.h"

namespace pto::jit {

// One line per kernel-to-be: its root node and the nodes computed inside it.
std::string FusionGroupsText(const ir::Graph& graph, const FusionGroups& groups);
// One line per kernel: "name: grid [r, c] grain [r, c] work/cell w threads t".
std::string BlockScheduleText(const ir::Graph& graph, const ir::TileGraph& tiles, int threads);
// The buffer plan's slots, then one line per call naming the buffers it reads and writes, then
// the outputs declared in place (InPlaceOutputsText).
std::string ExecutionText(const ir::TileGraph& tiles, const BufferPlan& buffers);
// "output 0 over input 1: in place (REASON)" or "...: copied after the input's last reader
// (REASON)".
std::string InPlaceOutputText(const ir::InPlaceOutputPlan& decision);
// "in-place outputs:" and one such line per declared output; empty when none is declared.
std::string InPlaceOutputsText(const ir::TileGraph& tiles);

}  // namespace pto::jit

#endif  // PTO_JIT_PIPELINE_TEXT_H_
