// Pass (level 3, block graph): how each kernel maps onto cores. Chooses the default TileConfig
// from DeviceInfo by rules (vector width, register blocking, split grain) and the work per
// grid cell the runtime uses to decide between a serial and a parallel launch.
#ifndef PTO_JIT_PASSES_SCHEDULE_BLOCKS_H_
#define PTO_JIT_PASSES_SCHEDULE_BLOCKS_H_

#include "device/device_info.h"
#include "jit/ir/tile_graph.h"

namespace pto::jit {

void ScheduleBlocks(ir::TileGraph& tiles, const device::DeviceInfo& device);

// After PrepackConstantWeights: a matmul whose B is not prepacked and is read in the broadcast
// form with rows of at most 512 bytes (N <= 128 f32) reads it in place (pack_b = false): a
// packed panel of such rows saves nothing its copy costs.
void ReadShortRowsOfBInPlace(ir::TileGraph& tiles);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_SCHEDULE_BLOCKS_H_
