// Pass (level 4, execution graph): decides how each Function output declared in place of an
// input (FunctionOptions::in_place_outputs) is written, and records it in
// TileGraph::in_place_outputs.
//
// At a call the output's memory may be the input's memory, so the kernel W that stores output
// O may write over input I only when no kernel reads I's old value after W starts. The pair is
// written in place when
//   - W is the only kernel that stores to O;
//   - every other kernel that reads I runs before W;
//   - W itself reads I, if at all, only at the element it writes, before writing it
//     (mark_in_place's KernelMayWriteOver: an elementwise kernel or row op whose every access
//     of I is its store's access, p = p - lr * g), never a matmul or a transposed read.
// Otherwise O's buffer becomes a temp and a copy kernel, inserted right after the last kernel
// that reads I or writes the temp, copies it into the caller's output: correct whether or not
// the output's memory is the input's. Either plan is correct when the caller passes separate
// memory, so one plan serves both kinds of call.
//
// InvalidArgument for a pair naming an output the graph does not have, or an output whose
// dtype is not its input's.
#ifndef PTO_JIT_PASSES_PLAN_IN_PLACE_OUTPUTS_H_
#define PTO_JIT_PASSES_PLAN_IN_PLACE_OUTPUTS_H_

#include <span>

#include "absl/status/status.h"
#include "device/device_info.h"
#include "jit/ir/graph.h"
#include "jit/ir/tile_graph.h"
#include "pto/options.h"

namespace pto::jit {

// `graph`: the tensor graph `tiles` was built from (its outputs' shapes and dtypes). A copy
// kernel added gets its default tile config for `device`.
absl::Status PlanInPlaceOutputs(const ir::Graph& graph, std::span<const InPlaceOutput> pairs,
                                const device::DeviceInfo& device, ir::TileGraph& tiles);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_PLAN_IN_PLACE_OUTPUTS_H_
