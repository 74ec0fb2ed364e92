// Internal to jit/tuning: what a search space knows of its kernel, the TileConfig fields by name,
// and the spec builders per kind (matmul_space.cc, loop_space.cc). See kernel_space.h.
#ifndef PTO_JIT_TUNING_SPACE_BUILDERS_H_
#define PTO_JIT_TUNING_SPACE_BUILDERS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "device/device_info.h"
#include "jit/ir/tile_ir.h"
#include "tuner/search_space.h"

namespace pto::jit::tuning {

// The kernel facts a space is derived from. `wide`: the kind-wide space (KindSearchSpace), which
// knows no kernel: every extent unknown, grains free, no default and no kernel-dependent rule.
struct KernelFacts {
  ir::KernelKind kind = ir::KernelKind::kElementwise;
  bool wide = false;
  ir::TileConfig current;                // the kernel's config: the space's default
  std::optional<int64_t> rows, cols;     // the grid (ir::KernelGrid) where static
  std::optional<int64_t> step;           // loop kinds: the vectorized loop's extent
  std::optional<int64_t> work_per_cell;  // loop kinds: elements per grid cell
  bool cols_inert = false;               // the grid has one column (tile_cols ignored)
  bool one_store = false;                // loop kinds: one store (streaming stores apply)
  // Matmul.
  std::optional<int64_t> n, k;
  bool dot_form = false;     // B stored [N, K] (see emit_matmul.cc)
  bool can_pack = true;      // packing B can happen (B fixed along the batch dims, or the dot form)
  bool can_k_block = true;   // one f32 store: K blocking keeps partial sums in the output
  bool b_prepacked = false;  // Kernel::b_packed >= 0
};

// A TileConfig field by name; nullptr for a name that is not a field.
struct TileConfigField {
  std::string_view name;
  int64_t (*get)(const ir::TileConfig&);
  void (*set)(ir::TileConfig&, int64_t);
};
const TileConfigField* FindTileConfigField(std::string_view name);

// One value per parameter read from `config` (ToSpaceConfig's rule for ignored fields: a value
// that is not a candidate of a parameter whose only candidate is 0 reads as 0). A parameter that
// is not a field reads as 0.
tuner::Config ConfigFromFields(std::span<const tuner::Parameter> parameters,
                               const ir::TileConfig& config);

// Sorted, distinct.
std::vector<int64_t> SortedUnique(std::vector<int64_t> values);
// Candidates of a grain (or kc) over `extent`: `list` below a static extent, one value for "the
// whole extent" (`current` when it is one, else `whole` when given), and `current`. With an
// unknown extent: all of `list`, `whole` and `current`.
std::vector<int64_t> ExtentCandidates(std::span<const int64_t> list, std::optional<int64_t> extent,
                                      std::optional<int64_t> whole, int64_t current);
// Rows (or columns) a task of grain `grain` covers: the grain capped to a static extent; 0 (and
// no grain) is the whole extent; nullopt when unknown.
std::optional<int64_t> TaskSpan(int64_t grain, std::optional<int64_t> extent);

// Value of parameter `name` in `config` of the spec being built (which must have it).
int64_t ValueOf(const tuner::SearchSpaceSpec& spec, const tuner::Config& config,
                std::string_view name);

// "parallel_tasks" over (tile_rows[, tile_cols]) for a kernel with a static grid: at least as
// many tasks as the default's, up to the cores this process has. nullopt when not applicable.
std::optional<tuner::Constraint> ParallelTasksRule(const KernelFacts& facts,
                                                   const device::DeviceInfo& device,
                                                   bool with_cols);

// Parameters and rules; default_config is set for a kernel's space (not the wide one).
tuner::SearchSpaceSpec MatMulSpaceSpec(const KernelFacts& facts, const device::DeviceInfo& device);
tuner::SearchSpaceSpec LoopSpaceSpec(const KernelFacts& facts, const device::DeviceInfo& device);

}  // namespace pto::jit::tuning

#endif  // PTO_JIT_TUNING_SPACE_BUILDERS_H_
