// Pass (level 3, block graph): gives each kernel its default TileConfig (the policy in
// default_tile_configs.h: vector width, register blocking, split grain) and records the work
// per grid cell the runtime uses to decide between a serial and a parallel launch.
#ifndef PTO_JIT_PASSES_CHOOSE_TILE_CONFIGS_H_
#define PTO_JIT_PASSES_CHOOSE_TILE_CONFIGS_H_

#include <vector>

#include "device/device_info.h"
#include "jit/ir/tile_graph.h"

namespace pto::jit {

// `constant_inputs[i]`: input i is constant (its matmuls' B will be read prepacked).
void ChooseTileConfigs(ir::TileGraph& tiles, const device::DeviceInfo& device,
                       const std::vector<bool>& constant_inputs);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_CHOOSE_TILE_CONFIGS_H_
