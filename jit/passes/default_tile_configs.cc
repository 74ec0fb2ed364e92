#include "jit/passes/default_tile_configs.h"

#include <algorithm>
#include <vector>

namespace pto::jit {

namespace {

// Matmuls over a prepacked B larger than the L2 prefetch it this far ahead
// (TileConfig::prefetch_b): the weight streams from memory once per call. A B that stays in the
// L2 gains nothing and pays the prefetches.
constexpr int64_t kPrefetchBBytes = 4096;
// Columns per parallel task of elementwise and reduce kernels: a multiple of every vector width,
// large enough that a task's work dwarfs its launch.
constexpr int64_t kColumnGrain = 1 << 14;
// Rows (of the result viewed as [P * N, Q]) per parallel task of scatter_add kernels: a task
// zeroes a contiguous block and scans all the indices once, so its block must be large
// enough that the zeroing dwarfs the scan (256 rows of an embedding's 128 columns: 128 KiB).
constexpr int64_t kScatterRowGrain = 256;
// Elementwise kernels with a transcendental prefetch their streamed inputs this far ahead
// (TileConfig::prefetch_inputs): without it memory waits while the body computes and the two
// add up. A plain add pays the prefetches in cache and gains nothing from memory.
constexpr int64_t kPrefetchInputBytes = 4096;
// Tasks of a transposing copy (ir::TransposingCopyOf): it moves blocks of vector-width rows
// and columns through registers (jit/codegen/emit_transposing_copy.h), so a task needs rows as
// well as columns; 64 x 128 elements (32 KiB) make a task's work dwarf its launch. A copy that
// stores across its rows writes runs as long as a task's rows: with more than 64 rows it takes
// up to kTransposeStoreRows of them, in tasks of the same 32 KiB.
constexpr int64_t kTransposeTileRows = 64;
constexpr int64_t kTransposeTileColumns = 128;
constexpr int64_t kTransposeStoreRows = 256;
// A matmul with at most this many rows (static M) gets the few-rows micro-tile.
constexpr int64_t kFewRows = 48;
// A matmul with at most this many rows (static M) is split across threads by columns only.
constexpr int64_t kWholeRows = 1024;
// Rows of a task of a longer (or symbolic) M: each task packs its own panels of B, so short
// tasks re-read B from memory once each. A multiple of every mr the tuner tries, and one of its
// row grains.
constexpr int64_t kRowTaskRows = 384;

// A static M of long rows over a B that is not constant and at most this many (static)
// columns, on 32 registers: each task takes all the columns, so its rows of A are read once
// and B packed once per task, and the rows split as for few columns (equal tasks, a multiple
// of the cores in number).
constexpr int64_t kWholeColumnsMaxN = 512;

// A static M of at least kRowSplitMinRows rows over a prepacked B (a constant weight: no task
// copies it) splits its rows as a matmul over few columns does: kernels over the same rows
// (the linears of a transformer block) then cut them at the same rows, so each thread reads the
// rows it wrote, and the pieces are even (a grain of a fixed count of row blocks leaves a short
// last one: halves of 512 rows in blocks of 96 are 288 | 224, so a loop cuts the columns).
constexpr int64_t kRowSplitMinRows = 512;

// K blocks of kLongKBlock (on 32 registers, over long row tasks) want an L2 of at least
// kLongKBlockMinL2 bytes where each task packs B's panels, unless K is one such block; on
// smaller L2s those are kShortKBlock. A prepacked B keeps kLongKBlock.
constexpr int64_t kLongKBlock = 512;
constexpr int64_t kShortKBlock = 256;
constexpr int64_t kLongKBlockMinL2 = int64_t{2} << 20;

// Matmuls whose micro-tiles run K loops of at most this many steps (a static K, or K blocks
// of kc) over an output larger than the L1 prefetch their output lines before each loop
// (TileConfig::prefetch_output): the write-allocate misses then overlap the loop. Longer loops
// hide the stores' misses behind their own work; an output that fits the L1 pays the
// prefetches and gains nothing.
constexpr int64_t kPrefetchOutputMaxK = 128;

// The K loop's unroll of the 6 x 4 and 8 x 3 tiles on AMD's AVX-512 cores (see
// SetMatMulConfig).
constexpr char kAmdVendor[] = "AuthenticAMD";
constexpr int kAmdSixByFourUnroll = 1;
constexpr int kAmdEightByThreeUnroll = 2;

// On Zen 4 (AMD family 25 with AVX-512; the family's other cores, Zen 3, have none), matmuls whose
// K loop runs at most this many steps and whose static M is a multiple of 4 take 4 x 4 micro-tiles
// instead of 6 x 4 (docs/default_configs.md). Longer loops, and M that would leave 4 x 4 a tail of
// 1-3 rows, keep 6 x 4.
constexpr int kZen4Family = 25;
constexpr int64_t kZen4FourRowsMaxK = 64;
// On Zen 4, a matmul that packs a B stored [K, N] (not a constant weight: those are prepacked)
// prefetches this many rows ahead of its copy (TileConfig::pack_prefetch_rows): the copy walks
// down B a row stride apart, and the core's prefetchers do not keep up (docs/default_configs.md).
constexpr int64_t kZen4PackPrefetchRows = 16;

// A Function output of at least this many times the private caches (L2 x cores) is written
// with streaming stores. The reported L3 is not a measure: a VM reports the host's whole L3.
constexpr int64_t kStreamingCacheMultiple = 4;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool HasTranscendental(const std::vector<ir::ExprNode>& program) {
  return std::any_of(program.begin(), program.end(),
                     [](const ir::ExprNode& n) { return ir::IsTranscendental(n.op); });
}

// Whether the stores of a kernel writing `output_bytes` of a Function output should bypass the
// caches: no cache here can hold the output.
bool StreamsOutput(const std::optional<int64_t>& output_bytes, const device::DeviceInfo& device) {
  return output_bytes.has_value() &&
         *output_bytes >= kStreamingCacheMultiple * device.l2_bytes * std::max(1, device.cores);
}

// Whether every batch entry of a matmul reads the same B (its batch strides are 0).
bool SharedB(const ir::Kernel& k) {
  if (k.b < 0) return false;
  const ir::Access& b = k.accesses[k.b];
  for (size_t d = 0; d + 2 < k.domain.size(); ++d) {
    if (d >= b.strides.size() || !b.strides[d].IsConstant() || b.strides[d].constant() != 0) {
      return false;
    }
  }
  return true;
}

// Whether a matmul whose rows are the split (few columns) takes one task per core over all of
// N. Each task packs its own panels of B, so every row task copies B once more and every column
// task reads A once more: with K >= kWholeColumnsMinK, B packed per task and unbatched, one task
// per core over all columns copies least. A shorter K packs little and keeps the column split.
constexpr int64_t kWholeColumnsMinK = 128;
bool OneTaskPerCore(const ir::Kernel& k, const ir::TileConfig& c, bool constant_b) {
  const ir::SymExpr& n = k.domain.back();
  return !constant_b && c.pack_b && k.domain.size() == 2 && n.IsConstant() && k.k.IsConstant() &&
         k.k.constant() >= kWholeColumnsMinK;
}

// Vectors of columns of the 8-row few-rows tile (32 registers) over a constant B (B packed per
// call keeps 8 x 3, as the packing dominates). 8 x 3 loads fewer B vectors per FMA, which pays
// once B is reused by 3 or more row blocks (M >= 24) and only when its blocks cover N: columns
// past the last full block read B in place, a cache line per K row.
int EightRowVectors(int64_t m, const ir::SymExpr& n, int lanes) {
  if (m < 24) return 2;
  return !n.IsConstant() || n.constant() % (int64_t{3} * lanes) == 0 ? 3 : 2;
}

// The most rows of `nr_vectors` vectors, and the most vectors of `mr` rows, whose micro-tile
// fits `registers` (ir::MatMulMicroTileRegisters; at least 1).
int MostRows(int nr_vectors, int registers) {
  int mr = 1;
  while (ir::MatMulMicroTileRegisters(mr + 1, nr_vectors) <= registers) ++mr;
  return mr;
}
int MostVectors(int mr, int registers) {
  int nr_vectors = 1;
  while (ir::MatMulMicroTileRegisters(mr, nr_vectors + 1) <= registers) ++nr_vectors;
  return nr_vectors;
}

// Matmuls of a static M of at most kFewRows rows: decode steps, small batches.
bool FewRows(const ir::SymExpr& m) { return m.IsConstant() && m.constant() <= kFewRows; }

// The micro-tile: mr rows x nr vectors of accumulators within `regs` registers. Few rows over
// enough columns take 4 rows: a 6-row tile would leave most rows to the single-row tail. With
// 32 registers (AVX-512) the few-rows tile has 8 rows when M is a multiple of 8 (8 x 3 or
// 8 x 2: EightRowVectors), else 4 x 4; other matmuls over 4 vectors of columns take 6 x 4
// (10 loads per 24 FMAs instead of 10 per 16), over 3 (the last one partial or not) 8 x 3 unless
// B is stored [N, K], over fewer 8 x 2. 16-register targets (AVX2) take 4 x 2 for few
// rows (B's micro-panels are passed over M / 4 times instead of M / 2 with 2 x 4, for the same
// 6 loads per 8 FMAs; 4 x 3 runs out of registers) and 6 x 2 otherwise; 8 registers keep
// 2 rows for few rows.
void SetMicroTile(const ir::SymExpr& m, const ir::SymExpr& n, bool constant_b, bool dot_form,
                  int lanes, int regs, ir::TileConfig& c) {
  const bool wide_regs = regs >= 32;
  const bool wide = !n.IsConstant() || n.constant() >= int64_t{8} * lanes;
  const bool few_rows = FewRows(m);
  if (few_rows && wide && wide_regs && m.constant() % 8 == 0) {
    c.nr_vectors = constant_b ? EightRowVectors(m.constant(), n, lanes) : 3;
    c.mr = 8;
  } else if (few_rows && wide && (wide_regs || MostVectors(4, regs) >= 2)) {
    c.mr = 4;
    c.nr_vectors = wide_regs ? std::min(4, MostVectors(c.mr, regs)) : 2;
  } else if (few_rows && wide) {  // 8 registers
    c.mr = 2;
    c.nr_vectors = std::min(4, MostVectors(c.mr, regs));
  } else if (wide_regs && (!n.IsConstant() || n.constant() >= int64_t{4} * lanes)) {
    c.nr_vectors = 4;
    c.mr = 6;
  } else {
    // Fewer than 4 vectors of columns: all of them in one micro-tile when they are 3 (with 32
    // registers; the last, masked, shares the A broadcasts), else 2 per micro-tile. B stored
    // [N, K] keeps 2: its columns' blocks are what a constant B is prepacked in, and N below
    // 3 vectors would have no full block of 3 to pack.
    const bool three =
        wide_regs && !dot_form && n.IsConstant() && CeilDiv(n.constant(), lanes) == 3;
    c.nr_vectors = three ? 3 : 2;
    c.mr = std::min(8, MostRows(c.nr_vectors, regs));
  }
}

// Few columns, or batched (rows = batch x M): the rows are the split, in a multiple of the
// cores of tasks, at least one per core and up to two while each keeps 8 * mr rows, more when
// tasks would exceed kRowTaskRows. Shorter tasks pay a launch and a panel packing per few
// blocks; a task count that is not a multiple of the cores leaves a core idle. A symbolic row
// count takes 16 * mr.
void SetRowSplit(const ir::Kernel& k, const ir::SymExpr& grid_rows, bool constant_b,
                 const device::DeviceInfo& device, ir::TileConfig& c) {
  const int64_t mr = c.mr;
  const int64_t cores = std::max(1, device.cores);
  if (!grid_rows.IsConstant()) {
    c.tile_rows = 16 * mr;
    return;
  }
  const int64_t r = std::max<int64_t>(1, grid_rows.constant());
  int64_t tasks = std::max(cores, std::min(2 * cores, r / (8 * mr)));
  if (OneTaskPerCore(k, c, constant_b)) {
    c.tile_cols = k.domain.back().constant();
    tasks = cores;
  }
  tasks = std::max(tasks, CeilDiv(r, kRowTaskRows));
  tasks = CeilDiv(tasks, cores) * cores;
  c.tile_rows = CeilDiv(CeilDiv(r, tasks), mr) * mr;
}

// The policy for TileConfig::prefetch_output (see kPrefetchOutputMaxK). A symbolic M counts as
// large: its rows are batches of tokens.
bool PrefetchesOutput(const ir::Kernel& k, const ir::TileConfig& c,
                      const device::DeviceInfo& device) {
  if (!k.k.IsConstant()) return false;
  const int64_t steps = c.kc > 0 ? std::min(c.kc, k.k.constant()) : k.k.constant();
  if (steps > kPrefetchOutputMaxK) return false;
  int64_t floats = 1;
  for (const ir::SymExpr& d : k.domain) {
    if (!d.IsConstant()) return true;
    floats *= d.constant();
  }
  return floats * 4 > device.l1d_bytes;
}

bool IsZen4(const device::DeviceInfo& device) {
  return device.vendor == kAmdVendor && device.family == kZen4Family &&
         device.vector_registers >= 32;
}

// See kZen4FourRowsMaxK. Applies to the 6 x 4 tile only; its K loop's unroll (1 on AMD) stays.
bool Zen4ShortKTakesFourRows(const ir::Kernel& k, const device::DeviceInfo& device,
                             const ir::TileConfig& c) {
  const ir::SymExpr& m = k.domain[k.domain.size() - 2];
  return IsZen4(device) && c.mr == 6 && c.nr_vectors == 4 && k.k.IsConstant() &&
         k.k.constant() <= kZen4FourRowsMaxK && m.IsConstant() && m.constant() % 4 == 0;
}

// With 32 registers: K blocks of 512 when a task has long runs of rows (the panel serves every
// row block) and B is prepacked, the L2 holds 2 MiB or K is one block, column grains of 2
// blocks, and the K loop unrolled 4 times; 16-register targets keep kc 256, 4 blocks and unroll 1.
void SetMatMulConfig(const ir::Kernel& k, bool constant_b, const device::DeviceInfo& device,
                     ir::TileConfig& c) {
  const int lanes = device.f32_lanes();
  const int regs = std::max(8, device.vector_registers);
  const bool wide_regs = regs >= 32;
  const ir::SymExpr& m = k.domain[k.domain.size() - 2];
  const ir::SymExpr& n = k.domain.back();
  const bool few_rows = FewRows(m);
  SetMicroTile(m, n, constant_b, ir::MatMulDotForm(k), lanes, regs, c);
  c.unroll = wide_regs ? 4 : 1;
  // LLVM schedules a K loop unrolled 4 times for AMD's AVX-512 cores with accumulators of the
  // 24-accumulator tiles spilled to the stack inside the loop. Unrolled twice, the 8 x 3 tile
  // runs from registers; the 6 x 4 tile, which holds 4 vectors of B beside them, runs best
  // with its loop not unrolled.
  if (wide_regs && device.vendor == kAmdVendor) {
    if (c.mr == 6 && c.nr_vectors == 4) c.unroll = kAmdSixByFourUnroll;
    if (c.mr == 8 && c.nr_vectors == 3) c.unroll = kAmdEightByThreeUnroll;
  }
  if (Zen4ShortKTakesFourRows(k, device, c)) c.mr = 4;
  c.panel_bytes = device.l2_bytes / 2;  // B's panel and A's rows share the L2
  // Acts only when B is prepacked (a constant weight), whose static K x N is known then.
  const bool b_beyond_l2 =
      k.k.IsConstant() && n.IsConstant() && k.k.constant() * n.constant() * 4 > device.l2_bytes;
  c.prefetch_b = b_beyond_l2 ? kPrefetchBBytes : 0;
  c.pack_b = true;
  c.tile_cols = int64_t{c.nr_vectors} * lanes * (wide_regs ? 2 : 4);
  // Few rows, but at least 16 of them, on 32 registers: one block of columns per task (M = 8
  // keeps 2 blocks).
  if (few_rows && wide_regs && m.constant() >= 16) {
    c.tile_cols = int64_t{c.nr_vectors} * lanes;
  }
  // Row tasks repeat the packing of B's panels: an unbatched static M of up to kWholeRows
  // rows over columns enough for every thread is split along the columns only, and a
  // longer or symbolic M in tasks of kRowTaskRows.
  const bool many_cols = !n.IsConstant() || n.constant() >= 4 * c.tile_cols;
  // Batch entries that share B (x [batch, seq, d] times a weight) are one (batch x M)-row
  // matmul to the rules on B's reuse below.
  const bool flat = k.domain.size() == 2 || SharedB(k);
  const ir::SymExpr grid_rows = ir::KernelGrid(k)[0];
  const bool long_rows = flat && many_cols;
  const bool whole_rows = long_rows && grid_rows.IsConstant() && grid_rows.constant() <= kWholeRows;
  // A flat matmul whose rows are the split (few columns) runs long row tasks too: K blocks of
  // 512 as for long rows.
  const bool row_split = flat && !many_cols && !few_rows;
  const bool long_k_blocks = constant_b || device.l2_bytes >= kLongKBlockMinL2 ||
                             (k.k.IsConstant() && k.k.constant() <= kLongKBlock);
  c.kc = wide_regs && (long_rows || row_split) && long_k_blocks ? kLongKBlock : kShortKBlock;
  // One row block (M <= mr) reads B once: K blocks would only send the partial sums through
  // the output and restart B's stream. The panel must still hold K rows of a block.
  if (constant_b && few_rows && m.constant() <= c.mr && k.k.IsConstant() &&
      k.k.constant() * ir::MatMulColumnBlock(c, lanes) * 4 <= c.panel_bytes) {
    c.kc = 0;
  }
  if (long_rows && constant_b && grid_rows.IsConstant() &&
      grid_rows.constant() >= kRowSplitMinRows) {
    SetRowSplit(k, grid_rows, constant_b, device, c);
  } else if (whole_rows && constant_b && n.IsConstant() && !few_rows && !b_beyond_l2) {
    // A prepacked B within the L2 costs a row task nothing to read whole: the rows are the
    // split, over all columns, as for a few columns, so a kernel over the same rows after it
    // (the MLP's down projection after its up projection) finds each of its rows on the thread
    // that wrote it.
    c.tile_cols = n.constant();
    SetRowSplit(k, grid_rows, constant_b, device, c);
  } else if (whole_rows) {
    c.tile_rows = std::max<int64_t>(1, grid_rows.constant());
  } else if (long_rows && !constant_b && wide_regs && grid_rows.IsConstant() && n.IsConstant() &&
             n.constant() <= kWholeColumnsMaxN) {
    c.tile_cols = n.constant();
    SetRowSplit(k, grid_rows, constant_b, device, c);
  } else if (long_rows) {
    c.tile_rows = kRowTaskRows;
  } else if (!few_rows) {
    SetRowSplit(k, grid_rows, constant_b, device, c);
  } else {
    c.tile_rows = int64_t{c.mr} * 4;
  }
  c.prefetch_output = PrefetchesOutput(k, c, device);
  // Zen 4 runs a 512-bit FMA as two 256-bit halves: a tail of at most 8 columns in a ymm
  // vector costs half of a masked zmm one (measurements: docs/default_configs.md).
  c.narrow_tail = IsZen4(device);
  if (IsZen4(device) && !constant_b && !ir::MatMulDotForm(k)) {
    c.pack_prefetch_rows = kZen4PackPrefetchRows;
  }
}

}  // namespace

ir::TileConfig DefaultTileConfig(const ir::Kernel& kernel, const KernelContext& context,
                                 const device::DeviceInfo& device) {
  ir::TileConfig c = kernel.config;
  c.vector_width = device.f32_lanes();
  switch (kernel.kind) {
    case ir::KernelKind::kElementwise:
      c.unroll = 4;
      c.tile_rows = 1;
      c.tile_cols = kColumnGrain;  // so that one long row still splits across threads
      c.streaming_stores = StreamsOutput(context.output_bytes, device);
      c.prefetch_inputs = HasTranscendental(kernel.output) ? kPrefetchInputBytes : 0;
      if (const ir::TransposingCopy copy = ir::TransposingCopyOf(kernel);
          copy != ir::TransposingCopy::kNone) {
        c.tile_rows = kTransposeTileRows;
        c.tile_cols = kTransposeTileColumns;
        c.streaming_stores = false;
        const ir::SymExpr rows = ir::KernelGrid(kernel)[0];
        if (copy == ir::TransposingCopy::kStoresAcross && rows.IsConstant() &&
            rows.constant() > kTransposeTileRows) {
          const int64_t lanes = std::max(1, device.f32_lanes());
          c.tile_rows = std::min(rows.constant(), kTransposeStoreRows);
          c.tile_cols = std::max(
              lanes, kTransposeTileRows * kTransposeTileColumns / c.tile_rows / lanes * lanes);
        }
      }
      break;
    case ir::KernelKind::kReduce:
      c.unroll = 2;
      c.tile_rows = 1;
      c.tile_cols = kColumnGrain;
      if (kernel.axis + 1 < static_cast<int>(kernel.domain.size()) &&
          kernel.domain[kernel.axis].IsConstant() && kernel.domain[kernel.axis].constant() > 0) {
        // Summing down columns (a bias gradient: [rows, n] -> [n]), each column costs the
        // reduced extent: a task takes the columns that make kColumnGrain elements, so a few
        // hundred columns still split across threads. Each column's sum stays in one task, in
        // order: the result does not depend on the split.
        const int64_t block = int64_t{c.unroll} * device.f32_lanes();
        const int64_t columns = CeilDiv(kColumnGrain, kernel.domain[kernel.axis].constant());
        c.tile_cols = std::clamp(CeilDiv(columns, block) * block, block, kColumnGrain);
      }
      break;
    case ir::KernelKind::kRowOp:
      c.unroll = 4;
      c.tile_rows = 1;
      c.tile_cols = 0;
      c.streaming_stores = StreamsOutput(context.output_bytes, device);
      break;
    case ir::KernelKind::kMatMul:
      SetMatMulConfig(kernel, context.constant_b, device, c);
      break;
    case ir::KernelKind::kScatterAdd:
      c.unroll = 2;
      c.tile_rows = kScatterRowGrain;
      c.tile_cols = kColumnGrain;
      c.streaming_stores = StreamsOutput(context.output_bytes, device);
      break;
  }
  return c;
}

}  // namespace pto::jit
