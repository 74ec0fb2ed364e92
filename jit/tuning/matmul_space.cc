// The matmul space: every TileConfig field emit_matmul.cc and the plan's split read. Candidate
// lists follow jit/codegen/matmul_config_grid.h where they overlap (mr, nr_vectors, unroll);
// the rules below prune what cannot fit the machine and what would only repeat another config.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "jit/ir/tile_ir.h"
#include "jit/tuning/space_builders.h"
#include "tuner/hardware_rules.h"

namespace pto::jit::tuning {
namespace {

constexpr int64_t kMr[] = {1, 2, 4, 6, 8, 12};
constexpr int64_t kNrVectors[] = {1, 2, 3, 4, 6};
constexpr int64_t kUnroll[] = {1, 2, 4, 8};
constexpr int64_t kKc[] = {128, 256, 512};         // and 0: K in one block
constexpr int64_t kMc[] = {48, 96, 192};           // and 0: no row blocks (multiples of every mr)
constexpr int64_t kPrefetchB[] = {0, 4096, 8192};  // bytes ahead in a prepacked B
// Rows ahead while packing B [K, N] (docs/default_configs.md has the distances measured).
constexpr int64_t kPackPrefetchRows[] = {0, 16};
// Row grains: multiples of most micro-tile heights; the whole M is added when small.
constexpr int64_t kRowGrains[] = {24, 48, 96, 192, 384};
constexpr int64_t kWholeRowsMax = 1024;
// Column grains, in vectors of the device's width (multiples of every nr_vectors of 3 and 6
// from 12 on; of 1, 2 and 4 throughout).
constexpr int64_t kColGrainVectors[] = {4, 12, 24, 48, 96};
// panel_bytes: these fractions of the L2 this process has.
constexpr int64_t kPanelDivisors[] = {8, 4, 2};
// Independent accumulators that hide the FMA latency: 2 FMA pipes x 4 cycles.
constexpr int64_t kMinAccumulators = 8;
// Packing B pays for a tile with at least this many row blocks (emit_matmul.cc).
constexpr int64_t kPackMinRowBlocks = 2;
// A tile of more row blocks prefetches only the next K block (emit_matmul.cc's kAheadToo).
constexpr int64_t kAheadTooRowBlocks = 4;
constexpr int64_t kF32 = 4;
// prefetch_output is searched for a static K of at most this many steps; a longer K loop hides
// its stores' misses behind its own work, and the space keeps the default.
constexpr int64_t kSearchedPrefetchOutputMaxK = 512;

std::vector<int64_t> Concat(std::span<const int64_t> list, std::vector<int64_t> more) {
  more.insert(more.end(), list.begin(), list.end());
  return SortedUnique(std::move(more));
}

// The K rows a packed panel or an A block holds: kc, or K without K blocking.
std::optional<int64_t> KcRows(int64_t kc, std::optional<int64_t> k) {
  if (kc > 0) return kc;
  return k;
}

std::vector<tuner::Parameter> Parameters(const KernelFacts& f, const device::DeviceInfo& device) {
  const ir::TileConfig& cur = f.current;
  const int64_t lanes = device.f32_lanes();
  const int64_t l2 = device.l2_bytes;
  std::vector<int64_t> col_grains;
  for (int64_t v : kColGrainVectors) col_grains.push_back(v * lanes);
  std::vector<int64_t> panels;
  for (int64_t d : kPanelDivisors) panels.push_back(l2 / d);
  const std::vector<int64_t> widths = tuner::VectorWidthCandidates(device);
  if (f.wide) {
    std::vector<int64_t> kc = {0}, mc = {0};
    kc.insert(kc.end(), std::begin(kKc), std::end(kKc));
    mc.insert(mc.end(), std::begin(kMc), std::end(kMc));
    panels.push_back(0);
    return {{"tile_rows", {0}},
            {"tile_cols", {0}},
            {"vector_width", widths},
            {"mr", Concat(kMr, {})},
            {"nr_vectors", Concat(kNrVectors, {})},
            {"unroll", Concat(kUnroll, {})},
            {"kc", kc},
            {"mc", mc},
            {"loop_order", {0, 1}},
            {"pack_b", {0, 1}},
            {"pack_prefetch_rows", Concat(kPackPrefetchRows, {})},
            {"panel_bytes", SortedUnique(panels)},
            {"prefetch_b", Concat(kPrefetchB, {})},
            {"prefetch_output", {0, 1}}};
  }
  const std::optional<int64_t> rows = f.rows, n = f.n;
  std::optional<int64_t> whole_rows;
  if (rows.has_value() && *rows <= kWholeRowsMax) whole_rows = *rows;

  std::vector<int64_t> vector_width = {lanes, cur.vector_width};
  if (f.b_prepacked) {
    vector_width = {cur.vector_width};
  } else if (n.has_value() && *n < 8 * lanes) {
    vector_width.insert(vector_width.end(), widths.begin(), widths.end());
  }
  std::vector<int64_t> mr = {cur.mr};
  for (int64_t v : kMr) {
    if (!rows.has_value() || (*rows > 1 && v <= *rows)) mr.push_back(v);
  }
  std::vector<int64_t> nr = {cur.nr_vectors};
  if (!f.b_prepacked) {
    nr.push_back(1);
    for (int64_t v : kNrVectors) {
      // A block wider than N is never taken (its columns all go to the tails).
      if (!n.has_value() || (f.dot_form ? v : v * lanes) <= *n) nr.push_back(v);
    }
  }
  std::vector<int64_t> kc = {0};
  if (f.can_k_block) kc = ExtentCandidates(kKc, f.k, 0, cur.kc);
  std::vector<int64_t> mc = {0, cur.mc};
  for (int64_t v : kMc) {
    if (!rows.has_value() || v < *rows) mc.push_back(v);
  }
  std::vector<int64_t> loop_order = {static_cast<int>(cur.loop_order)};
  if (SortedUnique(mc).size() > 1) loop_order = {0, 1};
  panels.push_back(cur.panel_bytes);
  return {{"tile_rows", ExtentCandidates(kRowGrains, rows, whole_rows, cur.tile_rows)},
          {"tile_cols", f.cols_inert ? std::vector<int64_t>{0}
                                     : ExtentCandidates(col_grains, f.cols, 0, cur.tile_cols)},
          {"vector_width", SortedUnique(vector_width)},
          {"mr", SortedUnique(mr)},
          {"nr_vectors", SortedUnique(nr)},
          {"unroll", Concat(kUnroll, {cur.unroll})},
          {"kc", kc},
          {"mc", SortedUnique(mc)},
          {"loop_order", SortedUnique(loop_order)},
          {"pack_b", f.can_pack ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0}},
          {"pack_prefetch_rows", f.can_pack && !f.dot_form && !f.b_prepacked
                                     ? Concat(kPackPrefetchRows, {cur.pack_prefetch_rows})
                                     : std::vector<int64_t>{0}},
          {"panel_bytes", SortedUnique(panels)},
          {"prefetch_b",
           f.b_prepacked ? Concat(kPrefetchB, {cur.prefetch_b}) : std::vector<int64_t>{0}},
          {"prefetch_output", f.k.has_value() && *f.k <= kSearchedPrefetchOutputMaxK
                                  ? std::vector<int64_t>{0, 1}
                                  : std::vector<int64_t>{cur.prefetch_output ? 1 : 0}}};
}

tuner::Constraint Rule(std::string name, std::string reason, std::vector<std::string> parameters,
                       std::function<bool(std::span<const int64_t>)> satisfied) {
  return {std::move(name), std::move(reason), std::move(parameters), std::move(satisfied)};
}

// Rules that need no kernel: they hold in the kind-wide space too.
void AddMachineRules(const KernelFacts& f, const device::DeviceInfo& device,
                     std::vector<tuner::Constraint>& rules) {
  const std::optional<int64_t> k = f.wide ? std::nullopt : f.k;
  rules.push_back(tuner::RegisterCapacity(
      device, {.parameters = {"mr", "nr_vectors"},
               .holds = "mr*nr_vectors accumulators + nr_vectors B vectors + 1 broadcast of A",
               .registers = [](std::span<const int64_t> v) {
                 return ir::MatMulMicroTileRegisters(v[0], v[1]);
               }}));
  rules.push_back(Rule("pack_b_needs_panels",
                       "packing B copies panels of panel_bytes into the scratch: pack_b needs "
                       "panel_bytes > 0",
                       {"pack_b", "panel_bytes"},
                       [](std::span<const int64_t> v) { return v[0] == 0 || v[1] > 0; }));
  rules.push_back(Rule("pack_prefetch_needs_packing",
                       "pack_prefetch_rows acts while packing B: with pack_b = 0 any value "
                       "repeats 0",
                       {"pack_b", "pack_prefetch_rows"},
                       [](std::span<const int64_t> v) { return v[0] == 1 || v[1] == 0; }));
  rules.push_back(
      Rule("panel_holds_a_block",
           "a panel holds kc (or K) rows of at least one nr_vectors x vector_width block of B "
           "(4-byte floats) within panel_bytes; a smaller budget shrinks panels to one block and "
           "skips packing",
           {"kc", "nr_vectors", "vector_width", "panel_bytes"}, [k](std::span<const int64_t> v) {
             const std::optional<int64_t> kc_rows = KcRows(v[0], k);
             return v[3] == 0 || !kc_rows.has_value() || *kc_rows * v[1] * v[2] * kF32 <= v[3];
           }));
  rules.push_back(Rule("row_blocks_need_mc",
                       "loop_order 1 (row blocks outermost) takes blocks of mc > 0 rows; with "
                       "mc = 0 it is loop_order 0, and loop_order 0 ignores mc",
                       {"loop_order", "mc"},
                       [](std::span<const int64_t> v) { return (v[0] == 1) == (v[1] > 0); }));
  rules.push_back(Rule("mc_whole_micro_tiles",
                       "mc is rounded up to a multiple of mr by codegen: other values repeat one",
                       {"mc", "mr"}, [](std::span<const int64_t> v) { return v[0] % v[1] == 0; }));
  tuner::CacheRule a_block;
  a_block.name = "a_block_fits_l2";
  a_block.level = tuner::CacheLevel::kL2;
  a_block.fraction = 1.0;
  a_block.parameters = {"mc", "kc", "panel_bytes"};
  a_block.working_set_bytes = [k](std::span<const int64_t> v) -> int64_t {
    // A's mc x kc block stays in the L2 beside B's panel while the panels sweep past it.
    const std::optional<int64_t> kc_rows = KcRows(v[1], k);
    if (v[0] == 0 || !kc_rows.has_value()) return 0;
    return v[0] * *kc_rows * kF32 + v[2];
  };
  rules.push_back(tuner::CacheCapacity(device, std::move(a_block)));
}

void AddKernelRules(const KernelFacts& f, const device::DeviceInfo& device,
                    const tuner::SearchSpaceSpec& spec, const tuner::Config& def,
                    std::vector<tuner::Constraint>& rules) {
  const int64_t lanes = device.f32_lanes();
  const std::optional<int64_t> rows = f.rows, cols = f.cols;
  if ((!rows.has_value() || *rows >= kMinAccumulators) &&
      (!cols.has_value() || *cols >= kMinAccumulators * lanes)) {
    rules.push_back(
        Rule("fma_latency_hidden",
             absl::StrCat("an mr x nr_vectors micro-tile keeps at least ", kMinAccumulators,
                          " independent accumulators (2 FMA pipes x 4 cycles of latency) when the "
                          "matmul has the rows and columns for them"),
             {"mr", "nr_vectors"},
             [](std::span<const int64_t> v) { return v[0] * v[1] >= kMinAccumulators; }));
  }
  rules.push_back(Rule(
      "row_grain_whole_micro_tiles",
      "tile_rows is a multiple of mr or the whole M: a task boundary inside a micro-tile leaves "
      "single-row tails",
      {"tile_rows", "mr"}, [rows](std::span<const int64_t> v) {
        return v[0] == 0 || (rows.has_value() && v[0] >= *rows) || v[0] % v[1] == 0;
      }));
  rules.push_back(
      Rule("column_grain_whole_blocks",
           "tile_cols is a multiple of nr_vectors x vector_width or the whole N: other task "
           "boundaries cut micro-tile blocks (and miss a prepacked B's blocks)",
           {"tile_cols", "nr_vectors", "vector_width"}, [cols](std::span<const int64_t> v) {
             return v[0] == 0 || (cols.has_value() && v[0] >= *cols) || v[0] % (v[1] * v[2]) == 0;
           }));
  rules.push_back(Rule("mc_below_task_rows",
                       "a row block of mc rows is smaller than a task's rows (min(tile_rows, M)); "
                       "one block per task is loop_order 0",
                       {"mc", "tile_rows"}, [rows](std::span<const int64_t> v) {
                         const std::optional<int64_t> task_rows = TaskSpan(v[1], rows);
                         return v[0] == 0 || !task_rows.has_value() || v[0] < *task_rows;
                       }));
  const bool dot = f.dot_form, prepacked = f.b_prepacked;
  rules.push_back(
      Rule("packing_needs_row_blocks",
           absl::StrCat("pack_b packs a panel only for a row block of at least ", kPackMinRowBlocks,
                        " x mr rows (or one row whose columns fit panel_bytes, or a prepacked B); "
                        "otherwise it repeats pack_b = 0"),
           {"pack_b", "tile_rows", "tile_cols", "panel_bytes", "mr", "mc"},
           [rows, cols, dot, prepacked](std::span<const int64_t> v) {
             if (v[0] == 0 || prepacked) return true;
             const std::optional<int64_t> task_rows = TaskSpan(v[1], rows);
             if (!task_rows.has_value()) return true;
             if (!dot && *task_rows == 1) {
               const std::optional<int64_t> span = TaskSpan(v[2], cols);
               return !span.has_value() || *span * kF32 <= v[3];
             }
             const int64_t mr = v[4];
             int64_t block_rows = *task_rows;
             if (v[5] > 0) block_rows = std::min(block_rows, (v[5] + mr - 1) / mr * mr);
             return block_rows >= kPackMinRowBlocks * mr;
           }));
  if (!dot && f.can_pack) {
    // emit_matmul.cc's SingleRowKBlocked: a one-row task whose packed columns fit the budget
    // sweeps B row by row with its own fixed blocks.
    const std::vector<int64_t> micro = {ValueOf(spec, def, "mr"), ValueOf(spec, def, "nr_vectors"),
                                        ValueOf(spec, def, "unroll"), ValueOf(spec, def, "kc")};
    rules.push_back(Rule(
        "one_row_sweep_ignores_micro_tile",
        "a one-row task whose columns fit panel_bytes runs the row-by-row sweep, which ignores "
        "mr, nr_vectors, unroll and kc: they keep the default's values",
        {"tile_rows", "tile_cols", "pack_b", "panel_bytes", "mr", "nr_vectors", "unroll", "kc"},
        [rows, cols, micro](std::span<const int64_t> v) {
          const std::optional<int64_t> task_rows = TaskSpan(v[0], rows);
          const std::optional<int64_t> span = TaskSpan(v[1], cols);
          const bool sweep =
              v[2] == 1 && v[3] > 0 && task_rows == 1 && span.has_value() && *span * kF32 <= v[3];
          return !sweep || std::equal(micro.begin(), micro.end(), v.begin() + 4);
        }));
  }
  if (prepacked) {
    // emit_matmul.cc's NextKBlockPrefetch: a task of more than kAheadTooRowBlocks row blocks
    // prefetches the next K block only, whatever prefetch_b's distance.
    const int64_t def_prefetch = ValueOf(spec, def, "prefetch_b");
    const int64_t distance = def_prefetch > 0 ? def_prefetch : kPrefetchB[1];
    rules.push_back(
        Rule("many_row_blocks_ignore_prefetch_distance",
             absl::StrCat("a task of more than ", kAheadTooRowBlocks,
                          " row blocks prefetches the next K block's panel, not prefetch_b "
                          "bytes ahead: any prefetch_b > 0 repeats ",
                          distance),
             {"prefetch_b", "tile_rows", "mr"}, [rows, distance](std::span<const int64_t> v) {
               const std::optional<int64_t> task_rows = TaskSpan(v[1], rows);
               const bool many = !task_rows.has_value() || *task_rows > kAheadTooRowBlocks * v[2];
               return !many || v[0] == 0 || v[0] == distance;
             }));
  }
  if (dot) {
    const int64_t unroll = ValueOf(spec, def, "unroll");
    rules.push_back(Rule("dot_unroll_needs_packing",
                         "the dot-product form unrolls no K loop of its own (only packed rows "
                         "use unroll): another unroll needs pack_b",
                         {"unroll", "pack_b"}, [unroll](std::span<const int64_t> v) {
                           return v[0] == unroll || v[1] == 1;
                         }));
  }
  if (std::optional<tuner::Constraint> tasks = ParallelTasksRule(f, device, !f.cols_inert)) {
    rules.push_back(*std::move(tasks));
  }
}

}  // namespace

tuner::SearchSpaceSpec MatMulSpaceSpec(const KernelFacts& facts, const device::DeviceInfo& device) {
  tuner::SearchSpaceSpec spec;
  spec.kind = "matmul";
  spec.parameters = Parameters(facts, device);
  AddMachineRules(facts, device, spec.constraints);
  if (facts.wide) return spec;
  const tuner::Config def = ConfigFromFields(spec.parameters, facts.current);
  spec.default_config = def;
  AddKernelRules(facts, device, spec, def, spec.constraints);
  return spec;
}

}  // namespace pto::jit::tuning
