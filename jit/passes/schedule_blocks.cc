#include "jit/passes/schedule_blocks.h"

#include <algorithm>

#include "jit/passes/prepack_constant_weights.h"

namespace pto::jit {

namespace {

// Matmuls over a prepacked B larger than the L2 prefetch it this far ahead
// (TileConfig::prefetch_b). Config sweeps, 2 threads, Emerald Rapids, weights rotated through
// memory, against none: M = 8 over 4096 x 4096 1.51x, 32 x 4096 x 4096 1.15x, M = 8 and 32
// over 768 x 3072 and 3072 x 768 1.07-1.10x, M of 128 and 512 1.02-1.08x, 768 x 768 1.02-1.05x;
// 8192 and 16384 bytes were no better. A B that stays in the L2 gains nothing and pays the
// prefetches (linear 2048x128x128, 64 KiB of weights: 0.95-0.98x, 1 thread).
constexpr int64_t kPrefetchBBytes = 4096;
// Columns per parallel task of elementwise and reduce kernels: a multiple of every vector width,
// large enough that a task's work dwarfs its launch (~0.4 us here).
constexpr int64_t kColumnGrain = 1 << 14;
// Elementwise kernels with a transcendental prefetch their streamed inputs this far ahead
// (TileConfig::prefetch_inputs): without it memory waits while the body computes and the two
// add up. Xeon (2 MiB L2), 2 threads, against none: gelu 4096x4096 (streaming stores) 1.25-1.33x,
// bias+gelu+residual 1.15-1.26x, gelu 1024x1024 from memory 1.07-1.13x and in cache 1.04x;
// 4096 to 16384 bytes ahead within 2%, 1024 and 2048 0.91-0.93x of 4096, prefetcht0 0.83x of
// prefetcht1. A plain add pays the prefetches in cache (64x1024: 0.80x) and gains nothing from
// memory (4096x4096 0.98x, 1024x1024 1.04x).
constexpr int64_t kPrefetchInputBytes = 4096;
// A matmul with at most this many rows (static M) gets the few-rows micro-tile.
constexpr int64_t kFewRows = 48;
// A matmul with at most this many rows (static M) is split across threads by columns only.
constexpr int64_t kWholeRows = 1024;
// Rows of a task of a longer (or symbolic) M: each task packs its own panels of B, so tasks
// of mr * 4 rows re-read B from memory M / 24 times (2048^3 on Emerald Rapids, 2 threads,
// interleaved: 384 rows with kc 512 ran 1.17x the 24-row tasks, 1024 rows 1.20x). A multiple
// of every mr the tuner tries, and one of its row grains.
constexpr int64_t kRowTaskRows = 384;

// Row tasks over a prepacked B (a constant weight: no task copies it) of an M of at least
// kShortTasksMinRows take kShortTaskRowBlocks row blocks each: a task's A rows stay in the L2
// across its column blocks and the load spreads evenly (Xeon with 2 MiB L2, 2 threads,
// interleaved, 96 rows against whole rows or 384: 512x128x512 1.14x, 2048x128x512 1.11x,
// 512x768x768 and 1024x768x768 1.04x, 512x768x3072, 512x3072x768 and 2048x768x3072 1.03x;
// 128 rows as 96 + 32 0.95-0.97x).
constexpr int64_t kShortTasksMinRows = 512;
constexpr int64_t kShortTaskRowBlocks = 16;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool HasTranscendental(const std::vector<ir::ExprNode>& program) {
  return std::any_of(program.begin(), program.end(),
                     [](const ir::ExprNode& n) { return ir::IsTranscendental(n.op); });
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

// Whether a matmul whose rows are the split (few columns: see ScheduleBlocks) takes one task
// per core over all of N. Each task packs its own panels of B, so every row task copies B once
// more and every column task reads A once more: with K >= kWholeColumnsMinK, B not prepacked
// and unbatched, one task per core over all columns beat 2 per core over 2 column blocks each
// (Xeon with 2 MiB L2, 2 threads, interleaved sweeps: 256^3 1.15x, 256x2048x256 1.16x,
// 256x768x256 1.13x, 512x256x256 1.09x, 256x512x384 1.09x, 300^3 1.08x, 1024x128x256 1.06x,
// 768x256x256 1.04x; 1 thread 0.98-1.01x). K = 64 packs little and keeps the column split
// (384x64x384 0.95x with all of N).
constexpr int64_t kWholeColumnsMinK = 128;
bool OneTaskPerCore(const ir::Kernel& k, bool constant_b) {
  const ir::SymExpr& n = k.domain.back();
  return !constant_b && k.config.pack_b && k.domain.size() == 2 && n.IsConstant() &&
         k.k.IsConstant() && k.k.constant() >= kWholeColumnsMinK;
}

// Vectors of columns of the 8-row few-rows tile (32 registers) over a constant B (prepacked;
// B packed per call keeps 8 x 3: 1.21-1.26x 8 x 2 at M = 8 and 1.07x at M = 16, as the packing
// dominates). 8 x 3 loads fewer B vectors
// per FMA, which pays once B is reused by 3 or more row blocks (M >= 24: 1.02-1.03x 8 x 2 at
// M = 32 over 768 x 768 and 768 x 3072) and only when its blocks cover N: columns past the
// last full block read B in place, a cache line per K row (N = 4096 is 85 blocks of 48 and 16
// columns). Interleaved sweeps, 2 threads, Xeon with 2 MiB L2, constant weights, 8 x 2
// against 8 x 3: M = 8 1.00-1.16x (8x4096x4096 1.21x with whole K), M = 16 1.06x (768 x 3072)
// and 1.38x (4096 x 4096), 32x4096x4096 1.02x.
int EightRowVectors(int64_t m, const ir::SymExpr& n, int lanes) {
  if (m < 24) return 2;
  return !n.IsConstant() || n.constant() % (int64_t{3} * lanes) == 0 ? 3 : 2;
}

// A Function output of at least this many times the private caches (L2 x cores) is written
// with streaming stores. The reported L3 is not a measure: a VM reports the host's whole L3
// (300 MiB on this 2-core guest).
constexpr int64_t kStreamingCacheMultiple = 4;

// Whether `call` (an elementwise or row op with one store) writes a Function output that no
// cache here can hold, so that its stores should bypass the caches.
bool StreamsOutput(const ir::TileGraph& tiles, const ir::KernelCall& call,
                   const device::DeviceInfo& device) {
  const ir::Kernel& k = call.kernel;
  if (k.stores.size() != 1) return false;
  const int slot = k.accesses[k.stores[0].access].buffer;
  const ir::Buffer& out = tiles.buffers[call.buffers[slot]];
  if (out.kind != ir::BufferKind::kOutput || !out.elements.IsConstant()) return false;
  const int64_t bytes = out.elements.constant() * 4;
  return bytes >= kStreamingCacheMultiple * device.l2_bytes * std::max(1, device.cores);
}

}  // namespace

void ScheduleBlocks(ir::TileGraph& tiles, const device::DeviceInfo& device,
                    const std::vector<bool>& constant_inputs) {
  const int lanes = device.f32_lanes();
  for (ir::KernelCall& call : tiles.calls) {
    ir::Kernel& k = call.kernel;
    ir::TileConfig& c = k.config;
    c.vector_width = lanes;
    switch (k.kind) {
      case ir::KernelKind::kElementwise:
        c.unroll = 4;
        c.tile_rows = 1;
        c.tile_cols = kColumnGrain;  // so that one long row still splits across threads
        c.streaming_stores = StreamsOutput(tiles, call, device);
        c.prefetch_inputs = HasTranscendental(k.output) ? kPrefetchInputBytes : 0;
        call.work_per_cell = 1;
        break;
      case ir::KernelKind::kReduce:
        c.unroll = 2;
        c.tile_rows = 1;
        c.tile_cols = kColumnGrain;
        call.work_per_cell = k.domain.empty() ? ir::SymExpr(1) : k.domain[k.axis];
        break;
      case ir::KernelKind::kRowOp:
        c.unroll = 4;
        c.tile_rows = 1;
        c.tile_cols = 0;
        c.streaming_stores = StreamsOutput(tiles, call, device);
        call.work_per_cell = k.domain.empty() ? ir::SymExpr(1) : k.domain.back();
        break;
      case ir::KernelKind::kMatMul: {
        // mr rows x nr vectors of accumulators, leaving registers for the nr vectors of B and
        // the A broadcast: mr * nr + nr + 1 <= registers. Few rows (a static M of at most
        // kFewRows: decode steps, small batches) over enough columns take 2 rows x 4 vectors:
        // a 6-row tile would leave most rows to the single-row tail (config sweeps of 8x768x768
        // and 32x768x3072 with B stored [N, K]: 1.5-1.7x the 6 x 2 tile).
        // With 32 registers (AVX-512; config sweeps on Emerald Rapids, 2 threads, interleaved
        // with the previous default): the few-rows tile has 8 rows when M is a multiple of 8
        // (8 x 3 or 8 x 2: EightRowVectors; 8 x 3 ran 1.11-1.28x the 4 x 4 tile at M = 8 and
        // 1.03-1.09x at M = 32 with constant weights in cache, equal with 4096^2 weights), else
        // 4 x 4 (21 registers; 1.2-1.5x the 2 x 4 tile at M = 8 and 32); other matmuls over 4
        // vectors of columns take 6 x 4 (29 registers: 10 loads per 24 FMAs instead of 10 per
        // 16; 1.03-1.15x the 8 x 2 tile from 384x64x384 to 512x4096x4096, equal at 2048^3),
        // K blocks of 512 when a task has long runs of rows (the panel serves every row block;
        // 1.03-1.13x), column grains of 2 blocks, and the K loop unrolled 4 times (1.05-1.13x).
        // 16-register targets (AVX2) keep 2 x 4 / 6 x 2, kc 256, unroll 1 (Zen 3 sweeps).
        const int regs = std::max(8, device.vector_registers);
        const bool wide_regs = regs >= 32;
        const ir::SymExpr& m = k.domain[k.domain.size() - 2];
        const ir::SymExpr& n = k.domain.back();
        const bool wide = !n.IsConstant() || n.constant() >= int64_t{8} * lanes;
        const bool few_rows = m.IsConstant() && m.constant() <= kFewRows;
        const bool constant_b = ReadsConstantInput(tiles, call, k.b, constant_inputs);
        if (few_rows && wide && wide_regs && m.constant() % 8 == 0) {
          c.nr_vectors = constant_b ? EightRowVectors(m.constant(), n, lanes) : 3;
          c.mr = 8;
        } else if (few_rows && wide) {
          c.nr_vectors = std::min(4, (regs - 1) / 3);
          c.mr = wide_regs ? 4 : 2;
        } else if (wide_regs && (!n.IsConstant() || n.constant() >= int64_t{4} * lanes)) {
          c.nr_vectors = 4;
          c.mr = 6;
        } else {
          c.nr_vectors = 2;
          c.mr = std::min(8, (regs - 3) / 2);
        }
        c.unroll = wide_regs ? 4 : 1;
        c.panel_bytes = device.l2_bytes / 2;  // B's panel and A's rows share the L2
        // Acts only when B is prepacked (a constant weight), whose static K x N is known then.
        const bool b_beyond_l2 = k.k.IsConstant() && n.IsConstant() &&
                                 k.k.constant() * n.constant() * 4 > device.l2_bytes;
        c.prefetch_b = b_beyond_l2 ? kPrefetchBBytes : 0;
        c.pack_b = true;
        c.tile_cols = int64_t{c.nr_vectors} * lanes * (wide_regs ? 2 : 4);
        // Few rows, but at least 16 of them, on 32 registers: one block of columns per task
        // (interleaved sweeps, 2 threads, constant weights: M of 16 to 40 over 768 x 768,
        // 768 x 3072 and 3072 x 768 1.00-1.09x, M = 8 0.97-1.01x so it keeps 2 blocks).
        if (few_rows && wide_regs && m.constant() >= 16) {
          c.tile_cols = int64_t{c.nr_vectors} * lanes;
        }
        // Row tasks repeat the packing of B's panels: an unbatched static M of up to kWholeRows
        // rows over columns enough for every thread is split along the columns only, and a
        // longer or symbolic M in tasks of kRowTaskRows.
        const bool many_cols = !n.IsConstant() || n.constant() >= 4 * c.tile_cols;
        // Batch entries that share B (x [batch, seq, d] times a weight) are one (batch x M)-row
        // matmul to the rules on B's reuse below (the transformer block at batch 16, demo
        // profile, 2 threads: the MLP down projection 1.13-1.25x, the whole call 1.06-1.12x).
        const bool flat = k.domain.size() == 2 || SharedB(k);
        const ir::SymExpr grid_rows = ir::KernelGrid(k)[0];
        const bool long_rows = flat && many_cols;
        const bool whole_rows =
            long_rows && grid_rows.IsConstant() && grid_rows.constant() <= kWholeRows;
        // A flat matmul whose rows are the split (few columns) runs long row tasks too:
        // K blocks of 512 as for long rows (Xeon, 2 threads, interleaved, against 256: constant
        // B 2048x512x128 1.07-1.12x, 512x512x128 1.13x, 1024x1024x128 and 2048x2048x256 1.06x,
        // 512x768x256 1.05x; B packed per task 1.01-1.09x).
        const bool row_split = flat && !many_cols && !few_rows;
        c.kc = wide_regs && (long_rows || row_split) ? 512 : 256;
        // One row block (M <= mr) reads B once: K blocks would only send the partial sums
        // through the output and restart B's stream (interleaved sweeps, 2 threads, Xeon with
        // 2 MiB L2, constant weights, kc 0 against 512: 8x4096x4096 1.09x, 4x4096x4096 1.08x,
        // 4x768x3072 1.10x, M of 4 and 8 over 768 x 768 and 3072 x 768 1.00-1.02x; 1 thread
        // 8x4096x4096 1.32x). The panel must still hold K rows of a block.
        if (constant_b && few_rows && m.constant() <= c.mr && k.k.IsConstant() &&
            k.k.constant() * ir::MatMulColumnBlock(c, lanes) * 4 <= c.panel_bytes) {
          c.kc = 0;
        }
        if (long_rows && constant_b && grid_rows.IsConstant() &&
            grid_rows.constant() >= kShortTasksMinRows) {
          c.tile_rows = kShortTaskRowBlocks * c.mr;
        } else if (whole_rows) {
          c.tile_rows = std::max<int64_t>(1, grid_rows.constant());
        } else if (long_rows) {
          c.tile_rows = kRowTaskRows;
        } else if (!few_rows) {
          // Few columns, or batched (rows = batch x M): the rows are the split, in a multiple
          // of the cores of tasks, at least one per core and up to two while each keeps 8 * mr
          // rows, more when tasks would exceed kRowTaskRows (128^3, 256^3 and 384x64x384 on
          // Emerald Rapids, 2 threads, interleaved: 1.1-1.24x the 24-row tasks, which paid a
          // launch and a panel packing per 4 blocks; bmm 12x128x64x128 about 1.15x; three
          // tasks on two cores left one core a third of the time idle). A symbolic row count
          // takes 16 * mr.
          const int64_t mr = c.mr;
          const int64_t cores = std::max(1, device.cores);
          if (grid_rows.IsConstant()) {
            const int64_t r = std::max<int64_t>(1, grid_rows.constant());
            int64_t tasks = std::max(cores, std::min(2 * cores, r / (8 * mr)));
            if (OneTaskPerCore(k, constant_b)) {
              c.tile_cols = n.constant();
              tasks = cores;
            }
            tasks = std::max(tasks, CeilDiv(r, kRowTaskRows));
            tasks = CeilDiv(tasks, cores) * cores;
            c.tile_rows = CeilDiv(CeilDiv(r, tasks), mr) * mr;
          } else {
            c.tile_rows = 16 * mr;
          }
        } else {
          c.tile_rows = int64_t{c.mr} * 4;
        }
        call.work_per_cell = ir::SymExpr(2) * k.k;
        break;
      }
    }
  }
}

}  // namespace pto::jit
