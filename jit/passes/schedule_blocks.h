// Pass (level 3, block graph): how each kernel maps onto cores. Chooses the default TileConfig
// from DeviceInfo by rules (vector width, register blocking, split grain) and the work per
// grid cell the runtime uses to decide between a serial and a parallel launch.
#ifndef PTO_JIT_PASSES_SCHEDULE_BLOCKS_H_
#define PTO_JIT_PASSES_SCHEDULE_BLOCKS_H_

#include <vector>

#include "device/device_info.h"
#include "jit/ir/tile_graph.h"

namespace pto::jit {

// `constant_inputs[i]`: input i is constant (its matmuls' B will be read prepacked).
void ScheduleBlocks(ir::TileGraph& tiles, const device::DeviceInfo& device,
                    const std::vector<bool>& constant_inputs);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_SCHEDULE_BLOCKS_H_
