// `pto_bench_kernels --sweep`: every config of the matmul config grid
// (jit/codegen/matmul_config_grid.h) on one shape, each compiled through the real pipeline
// (the traced program lowered, the matmul kernel's config replaced, the plan built and run),
// its output checked against a double-precision reference and timed over rotated inputs.
// Prints the fastest and slowest configs, where the default config ranks, and failures; with
// --sweep-csv the whole table (one row per config), the data a tuning strategy can be replayed
// on.
#ifndef PTO_TOOLS_BENCH_CONFIG_SWEEP_H_
#define PTO_TOOLS_BENCH_CONFIG_SWEEP_H_

#include <cstdint>
#include <string>

#include "tools/bench/timing.h"

namespace pto::bench {

struct SweepOptions {
  int64_t m = 256, k = 512, n = 512;  // --sweep-shape MxKxN
  bool transposed_a = false;  // --sweep-transposed-a: A stored [K, M], as a weight gradient's
  bool transposed_b = false;  // --sweep-transposed-b: B stored [N, K], as a linear's
  bool constant_b = false;    // --sweep-constant-b: B a constant input, read prepacked (weights)
  int threads = 2;
  int64_t limit = 0;  // configs at most, a seeded sample of the grid (0: every config)
  uint32_t seed = 1;
  std::string csv_path;  // --sweep-csv
  // --sweep-sets N: operand sets rotated through (0: enough to exceed twice the L3, at most 64,
  // so that each call reads its operands from memory; 1: one set, left in the caches).
  int sets = 0;
  // --sweep-configs "mr=12,nr_vectors=2;kc=512": these configs, each a change of the default's
  // fields (the tuning spaces' field names, as printed: mr, nr_vectors, unroll, kc, pack_b,
  // pack_prefetch_rows, panel_bytes, loop_order (panels_outer|row_blocks_outer), mc, prefetch_b,
  // prefetch_output, tile_rows, tile_cols, and the others of jit/tuning/space_builders.cc), instead
  // of the grid, timed interleaved with the default (a repetition of each in turn; see
  // TimeInterleaved).
  std::string configs;
  TimingOptions timing;
};

// Returns the process exit status; 2 when --sweep-configs does not parse: 0, or 1 when a config
// failed to compile or was wrong.
int RunConfigSweep(const SweepOptions& options);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_CONFIG_SWEEP_H_
