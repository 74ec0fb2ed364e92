// Spaces of the vectorized-loop kinds (elementwise, reduce, row_op, scatter_add): vector width,
// unroll, streaming stores, the elementwise prefetch distance and the plan's grain. The plan
// splits the grid by tile_rows and tile_cols.
#include <algorithm>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "jit/tuning/kernel_space.h"
#include "jit/tuning/space_builders.h"
#include "tuner/hardware_rules.h"

namespace pto::jit::tuning {
namespace {

constexpr int64_t kUnroll[] = {1, 2, 4, 8};
constexpr int64_t kRowGrains[] = {1, 2, 4, 8, 16, 32, 64};
constexpr int64_t kWholeRowsMax = 1024;
// Column grains: multiples of every vector width x unroll (and of the default policy's grain,
// jit/passes/default_tile_configs.cc).
constexpr int64_t kColGrains[] = {1024, 2048, 4096, 8192, 16384, 32768, 65536};
// A task split off a row does at least this many elements: launching one costs about 0.4 us.
constexpr int64_t kMinTaskElements = 4096;
// Elementwise inputs prefetched this many bytes ahead (TileConfig::prefetch_inputs); 0: none.
constexpr int64_t kPrefetchInputs[] = {0, 4096, 16384};

}  // namespace

tuner::SearchSpaceSpec LoopSpaceSpec(const KernelFacts& f, const device::DeviceInfo& device) {
  const bool has_cols = f.kind != ir::KernelKind::kRowOp;
  tuner::SearchSpaceSpec spec;
  spec.kind = SpaceKind(f.kind);
  const ir::TileConfig& cur = f.current;
  std::vector<int64_t> widths = tuner::VectorWidthCandidates(device);
  std::vector<int64_t> unroll(std::begin(kUnroll), std::end(kUnroll));
  // Streaming stores (elementwise and row ops with one store, scatter_add's zeroing; reduce
  // kernels ignore the field).
  const bool may_stream = f.kind != ir::KernelKind::kReduce;
  const std::vector<int64_t> streaming =
      may_stream && (f.wide || f.one_store) ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0};
  std::vector<int64_t> prefetch = {0};
  if (f.kind == ir::KernelKind::kElementwise) {
    prefetch.assign(std::begin(kPrefetchInputs), std::end(kPrefetchInputs));
  }
  if (f.wide) {
    spec.parameters.push_back({"tile_rows", {0}});
    if (has_cols) spec.parameters.push_back({"tile_cols", {0}});
    spec.parameters.push_back({"vector_width", widths});
    spec.parameters.push_back({"unroll", unroll});
    spec.parameters.push_back({"streaming_stores", streaming});
    spec.parameters.push_back({"prefetch_inputs", prefetch});
    return spec;
  }
  std::optional<int64_t> whole_rows;
  if (f.rows.has_value() && *f.rows <= kWholeRowsMax) whole_rows = *f.rows;
  widths.push_back(cur.vector_width);
  unroll.push_back(cur.unroll);
  spec.parameters.push_back(
      {"tile_rows", ExtentCandidates(kRowGrains, f.rows, whole_rows, cur.tile_rows)});
  if (has_cols) {
    spec.parameters.push_back(
        {"tile_cols", f.cols_inert ? std::vector<int64_t>{0}
                                   : ExtentCandidates(kColGrains, f.cols, 0, cur.tile_cols)});
  }
  spec.parameters.push_back({"vector_width", SortedUnique(widths)});
  spec.parameters.push_back({"unroll", SortedUnique(unroll)});
  spec.parameters.push_back({"streaming_stores", streaming});
  if (f.kind == ir::KernelKind::kElementwise) prefetch.push_back(cur.prefetch_inputs);
  spec.parameters.push_back({"prefetch_inputs", SortedUnique(prefetch)});
  spec.default_config = ConfigFromFields(spec.parameters, cur);

  const std::optional<int64_t> rows = f.rows, cols = f.cols, step = f.step;
  if (has_cols && !f.cols_inert) {
    spec.constraints.push_back(
        {"column_grain_whole_steps",
         "tile_cols is a multiple of vector_width x unroll or the whole row: other task "
         "boundaries end every task in vector and scalar tails",
         {"tile_cols", "vector_width", "unroll"},
         [cols](std::span<const int64_t> v) {
           return v[0] == 0 || (cols.has_value() && v[0] >= *cols) || v[0] % (v[1] * v[2]) == 0;
         }});
    const int64_t work = f.work_per_cell.value_or(1);
    spec.constraints.push_back(
        {"column_task_work",
         absl::StrCat("a task split off a row does at least ", kMinTaskElements,
                      " elements of work (tile_rows x tile_cols x work per cell): a smaller one "
                      "costs more to launch than it computes"),
         {"tile_rows", "tile_cols"},
         [rows, cols, work](std::span<const int64_t> v) {
           const bool splits_row = v[1] > 0 && (!cols.has_value() || v[1] < *cols);
           if (!splits_row) return true;
           const int64_t task_rows = TaskSpan(v[0], rows).value_or(v[0] > 0 ? v[0] : 1);
           return task_rows * v[1] * work >= kMinTaskElements;
         }});
  }
  if (step.has_value()) {
    spec.constraints.push_back(
        {"unrolled_step_fits_row",
         absl::StrCat("vector_width x unroll elements per step fit the ", *step,
                      "-element loop: a longer step never runs, so it repeats unroll 1"),
         {"vector_width", "unroll"},
         [step](std::span<const int64_t> v) { return v[1] == 1 || v[0] * v[1] <= *step; }});
  }
  if (std::optional<tuner::Constraint> tasks =
          ParallelTasksRule(f, device, has_cols && !f.cols_inert)) {
    spec.constraints.push_back(*std::move(tasks));
  }
  return spec;
}

}  // namespace pto::jit::tuning
