// The tuner's search space for one tile kernel: the TileConfig fields that
// codegen (jit/codegen/emit_*.cc) and the plan's split (Plan::Run) honour for the kernel's
// kind, with candidate values derived from DeviceInfo and the kernel's static extents, pruned by
// named rules (register and cache capacity, and configs that would only repeat another one).
// Parameter names are TileConfig field names; a config's text form ("tile_rows=4,...") is the
// one tuning records store.
//
// Parameters per kind (a field a kind ignores is not a parameter of its space):
//   matmul      tile_rows tile_cols vector_width mr nr_vectors unroll kc mc loop_order pack_b
//               panel_bytes
//   elementwise tile_rows tile_cols vector_width unroll
//   reduce      tile_rows tile_cols vector_width unroll      (tile_cols: the inner grid dim)
//   row_op      tile_rows vector_width unroll                 (the grid has one column)
// (Elementwise, reduce and row-op codegen ignore mr, nr_vectors, panel_bytes, pack_b, kc, mc and
// loop_order.)
//
// Candidates:
//  - Grains (tile_rows, tile_cols) and kc: values at or beyond a static extent all mean "the
//    whole extent", so the space keeps one of them: the default's value when it is one, else
//    the extent itself (tile_rows, when at most 1024 rows) or 0 (tile_cols, kc).
//  - A field the kernel ignores altogether has the single candidate 0: kc without K blocking
//    (more than one store, or the dot-product form when B cannot be packed), pack_b when B moves
//    with the batch dims, tile_cols when the grid has one column (a reduction over the last
//    axis). ToSpaceConfig reports 0 for such a field whatever its value.
//  - A matmul that reads a prepacked B (Kernel::b_packed >= 0) keeps nr_vectors and
//    vector_width: the packed layout's block is nr_vectors * vector_width columns.
//  - Matmul vector_width: the device's width; narrower ones too when a static N is below
//    8 vectors (a narrower vector leaves fewer columns to the scalar tail).
//
// Rules are SearchSpace constraints (names and reasons in the .cc). Every rule lets the
// default's own values through, so the kernel's current config is always in its space.
//
// Versions: kKernelSpaceVersion is the spaces' search_space_version; tuning keys carry it.
#ifndef PTO_JIT_TUNING_KERNEL_SPACE_H_
#define PTO_JIT_TUNING_KERNEL_SPACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "device/device_info.h"
#include "jit/ir/tile_ir.h"
#include "tuner/search_space.h"
#include "tuner/space_rules.h"

namespace pto::jit {

// Bump when parameters, candidates or rules change meaning.
// 3: streaming_stores for elementwise and row ops; batched dot-form matmuls may pack B.
// 4: prefetch_b for matmuls over a prepacked B.
// 5: prefetch_inputs for elementwise kernels.
// 6: prefetch_output for matmuls.
// 7: pack_prefetch_rows for matmuls.
inline constexpr int kKernelSpaceVersion = 7;

// "elementwise", "reduce", "row_op", "matmul", "scatter_add".
const char* SpaceKind(ir::KernelKind kind);
// Every kind's name, sorted.
std::vector<std::string> SpaceKinds();

// The search space for tuning `kernel` on `device`: its kind's parameters, candidates from its
// static extents, and `kernel.config` as the default (always in the space). InvalidArgument for
// a kernel codegen would reject (a matmul of rank < 2, a reduce axis out of range).
absl::StatusOr<tuner::SearchSpace> KernelSearchSpace(const ir::Kernel& kernel,
                                                     const device::DeviceInfo& device);

// The rules of KernelSearchSpace(kernel, device) without its enumeration: the same parameters,
// candidates, rules and default, so Parse, Contains and ToString answer as the space's do, at
// the cost of the one config they are given (a tuning record is checked with these before its
// config is used). The same errors as KernelSearchSpace.
absl::StatusOr<tuner::SpaceRules> KernelSpaceRules(const ir::Kernel& kernel,
                                                   const device::DeviceInfo& device);

// The config of `space` holding `config`'s values: one value per parameter, read from the
// TileConfig field of that name (see above for fields a kernel ignores, reported as 0).
// The space's parameters must be TileConfig fields (every space built here has only those).
tuner::Config ToSpaceConfig(const tuner::SpaceRules& space, const ir::TileConfig& config);

// `base` with the space's parameters set from `config`. A field whose value in `config` equals
// ToSpaceConfig(space, base)'s is left as `base` has it, so a field the kernel ignores keeps its
// value and ApplySpaceConfig(space, ToSpaceConfig(space, c), c) == c. Errors: `config` is not
// in the space (the SearchSpace::Contains code, its message naming the parameter or the rule),
// or a parameter that is not a TileConfig field (InvalidArgument).
absl::StatusOr<ir::TileConfig> ApplySpaceConfig(const tuner::SpaceRules& space,
                                                const tuner::Config& config, ir::TileConfig base);

// The kernel-independent space of `kind` on `device`: the same parameter names (and order) and
// version as every kernel's space of that kind, each candidate list the union over kernels, and
// only the rules that need no kernel (matmul: register_capacity, pack_b_needs_panels,
// panel_holds_a_block and a_block_fits_l2 for kc > 0, row_blocks_need_mc, mc_whole_micro_tiles;
// the other kinds have none). The grains (tile_rows, tile_cols) come from a kernel's extents,
// so their candidate list here is the placeholder {0}; ValidateSpaceConfig accepts any grain in
// [0, kMaxGrain]. NotFound for an unknown kind, naming the known ones.
absl::StatusOr<tuner::SearchSpace> KindSearchSpace(std::string_view kind,
                                                   const device::DeviceInfo& device);
inline constexpr int64_t kMaxGrain = int64_t{1} << 40;

// OK if `config_text` may be a config of some kernel's space of `kind` at `version` on `device`
// (pto cache import checks tuning records with it before any kernel is at hand). Every config
// of KernelSearchSpace(k, device) for a kernel k of that kind is accepted. Errors:
//   NotFound            unknown kind ("unknown search space kind 'x' (known: ...)")
//   FailedPrecondition  another version ("search space version 1 (this pto's matmul space is
//                       version 2)"), or a config that breaks a rule ("config '...' is outside
//                       the matmul space on this machine: violates constraint '<rule>': ...")
//   InvalidArgument     text that is not a config of the kind ("config '...' is not a config
//                       of the matmul space: ..." naming the item or parameter: not name=value,
//                       unknown, repeated or missing parameter, a value that is not a candidate,
//                       a grain outside [0, kMaxGrain])
absl::Status ValidateSpaceConfig(std::string_view kind, uint32_t version,
                                 std::string_view config_text, const device::DeviceInfo& device);

}  // namespace pto::jit

#endif  // PTO_JIT_TUNING_KERNEL_SPACE_H_
