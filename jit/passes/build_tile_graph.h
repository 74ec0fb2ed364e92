// Pass (level 2): emits one tile kernel per fusion group, with affine accesses for views and
// broadcasting, in execution order, plus the buffers they use.
#ifndef PTO_JIT_PASSES_BUILD_TILE_GRAPH_H_
#define PTO_JIT_PASSES_BUILD_TILE_GRAPH_H_

#include "absl/status/statusor.h"
#include "jit/ir/graph.h"
#include "jit/ir/tile_graph.h"
#include "jit/passes/fusion_groups.h"

namespace pto::jit {

absl::StatusOr<ir::TileGraph> BuildTileGraph(const ir::Graph& graph, const FusionGroups& groups);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_BUILD_TILE_GRAPH_H_
