// Pass (level 3, block graph): how each kernel maps onto cores. Chooses the default TileConfig
// from DeviceInfo by rules (vector width, register blocking, split grain) and the work per
// grid cell the runtime uses to decide between a serial and a parallel launch.
#ifndef PTO_JIT_PASSES_SCHEDULE_BLOCKS_H_
#define PTO_JIT_PASSES_SCHEDULE_BLOCKS_H_

#include "device/device_info.h"
#include "jit/ir/tile_graph.h"

namespace pto::jit {

void ScheduleBlocks(ir::TileGraph& tiles, const device::DeviceInfo& device);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_SCHEDULE_BLOCKS_H_
