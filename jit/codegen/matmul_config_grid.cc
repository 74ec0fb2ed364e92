#include "jit/codegen/matmul_config_grid.h"

namespace pto::jit {

int64_t MatMulConfigGrid::size() const {
  return static_cast<int64_t>(mr.size() * nr_vectors.size() * unroll.size() * kc.size() *
                              packing.size() * order.size());
}

ir::TileConfig MatMulConfigGrid::At(int64_t i) const {
  auto next = [&i](size_t n) {
    const size_t v = static_cast<size_t>(i % static_cast<int64_t>(n));
    i /= static_cast<int64_t>(n);
    return v;
  };
  ir::TileConfig c;
  const auto& [order_value, mc] = order[next(order.size())];
  c.loop_order = order_value;
  c.mc = mc;
  const auto& [pack, panel] = packing[next(packing.size())];
  c.pack_b = pack;
  c.panel_bytes = panel;
  c.kc = kc[next(kc.size())];
  c.unroll = unroll[next(unroll.size())];
  c.nr_vectors = nr_vectors[next(nr_vectors.size())];
  c.mr = mr[next(mr.size())];
  return c;
}

std::vector<ir::TileConfig> MatMulBoundaryConfigs() {
  auto make = [](int mr, int nrv, int unroll, int64_t kc, bool pack, int64_t panel,
                 ir::LoopOrder order, int64_t mc) {
    ir::TileConfig c;
    c.mr = mr;
    c.nr_vectors = nrv;
    c.unroll = unroll;
    c.kc = kc;
    c.pack_b = pack;
    c.panel_bytes = panel;
    c.loop_order = order;
    c.mc = mc;
    return c;
  };
  using ir::LoopOrder;
  return {
      make(1, 1, 1, 0, false, 0, LoopOrder::kPanelsOuter, 0),            // smallest tile
      make(1, 1, 1, 8, true, 1024, LoopOrder::kPanelsOuter, 0),          // one-block panels
      make(16, 4, 16, 0, false, 0, LoopOrder::kPanelsOuter, 0),          // largest tile, unroll
      make(8, 4, 16, 256, true, 262144, LoopOrder::kRowBlocksOuter, 1),  // mc below mr
      make(6, 2, 1, 256, true, 262144, LoopOrder::kPanelsOuter, 0),      // AVX2's default
      make(6, 4, 4, 512, true, 1048576, LoopOrder::kPanelsOuter, 0),     // AVX-512's default
      make(6, 2, 4, 64, true, 65536, LoopOrder::kRowBlocksOuter, 48),
      make(4, 3, 2, 8, false, 4096, LoopOrder::kRowBlocksOuter, 7),  // mc not a multiple of mr
  };
}

}  // namespace pto::jit
