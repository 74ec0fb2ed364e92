// MatMul: domain [batch..., M, N], contraction K. Grid {rows = prod(batch)*M, cols = N}.
// Rows are taken in blocks of config.mr within one batch entry; the M tail in one block of
// M mod mr rows (2 for a symbolic M) where that many remain, then single rows.
// Two micro-kernel forms, chosen from b's constant strides:
//  - broadcast form (the default): columns in blocks of config.nr_vectors vectors (then the
//    whole vectors a static N leaves in one micro-tile, with its partial last vector masked
//    when it has one, half as wide with config.narrow_tail when its columns fit; otherwise
//    single vectors, then one vector masked to the last columns, narrow likewise);
//    mr x nr vector accumulators over the K loop: A elements are broadcast, B rows are vector
//    loads along N, and llvm.fmuladd gives vector FMAs.
//  - dot-product form, when b's N stride is not the constant 1 but its K stride is (B stored
//    [N, K], e.g. a linear layer's weight or k in q.k^T): columns in blocks of config.nr_vectors
//    *columns* (then single columns), so the block again holds mr x nr vector accumulators, the
//    same register budget as the broadcast form. Each accumulator runs along K: B is a vector
//    load, A is a vector load when its K stride is 1 (else a per-lane gather). Each accumulator
//    is then reduced horizontally (llvm.vector.reduce.fadd, reassoc), the K tail (K mod lanes)
//    continues those sums in scalars, and the block's columns of one row form a vector of nr
//    lanes for the epilogue.
// When neither stride of b is the constant 1, the broadcast form loads B per lane (a gather).
// With config.panel_bytes, the tile's columns are swept in panels whose K x columns slice of B
// fits that budget (about half the L2), every row per panel: B stays in cache while A streams.
// With config.kc (K blocking), each panel is swept once per K block of kc rows of B: the
// micro-tiles start from the partial sums left in the output by the previous block, store
// their sums back, and only the last block runs the epilogue. config.loop_order puts either
// the panels or blocks of config.mc rows outermost. config.unroll unrolls the K loop.
// The epilogue program runs on the accumulators before the stores.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "jit/codegen/emit_bounds_check.h"
#include "jit/codegen/emit_expr.h"
#include "jit/codegen/emit_kernel.h"
#include "jit/codegen/emit_kinds.h"
#include "jit/codegen/emit_loops.h"
#include "jit/codegen/matmul_scratch.h"
#include "jit/codegen/reduction_ops.h"
#include "jit/codegen/vector_math.h"

namespace pto::jit {
namespace {

// An epilogue program beyond a few single-instruction ops (a transcendental activation, a long
// chain) is emitted once per width as a function the micro-tiles call (EpilogueFunction);
// shorter ones (a scale, a bias, a residual) inline at every accumulator: the call passes the
// tile through the stack and computes each vector's addresses in a loop, while inline copies
// of a short program cost little compile time (measurements: docs/default_configs.md).
constexpr int kInlineEpilogueOps = 8;
bool HeavyEpilogue(const std::vector<ir::ExprNode>& program) {
  int ops = 0;
  for (const ir::ExprNode& node : program) {
    switch (node.op) {
      case ir::ExprOp::kLoad:
      case ir::ExprOp::kConst:
      case ir::ExprOp::kAcc:
        break;
      case ir::ExprOp::kAdd:
      case ir::ExprOp::kSub:
      case ir::ExprOp::kMul:
      case ir::ExprOp::kMax:
      case ir::ExprOp::kMin:
      case ir::ExprOp::kNeg:
      case ir::ExprOp::kAbs:
      case ir::ExprOp::kRelu:
        ++ops;
        break;
      default:
        return true;
    }
  }
  return ops > kInlineEpilogueOps;
}

// A tile packs B only when it has at least this many row blocks to reuse the panel.
constexpr int64_t kPackMinRowBlocks = 2;
// Micro-tiles of a single row (M = 1, matrix-vector; and the M tail): vectors of columns in
// the broadcast form, columns in the dot-product form. Independent accumulators hide the FMA
// latency that a 1 x 2 tile exposes.
constexpr int kSingleRowVectors = 8;
constexpr int kSingleRowColumns = 8;
// K block of a one-row tile's row-by-row sweep of B (see SingleRowKBlocked).
constexpr int64_t kSingleRowKBlock = 256;
// Tiles of at most this many row blocks prefetch ahead of their loads as well as the next K
// block (NextKBlockPrefetch).
constexpr int64_t kAheadToo = 4;
// Floats per 64-byte cache line: one prefetch each.
constexpr int64_t kLineFloats = 16;
// K blocks of A rows the first column block prefetches a row block ahead (ShortARows): at
// most kShortARowMax floats (16 lines per row), at least kShortARowMin (kc and a static K).
constexpr int64_t kShortARowMax = 256;
constexpr int64_t kShortARowMin = 64;
// K steps in flight in a one-row tile over a prepacked B (SingleRowPacked): with nr_vectors
// accumulators each, enough independent FMAs to hide their latency.
constexpr int kPackedRowKSteps = 4;
// DotTail's cost model, in FMAs per row: a masked vector costs one per K step; a dot product
// one per K vector, kDotColumnCost for its reduction and set-up, and kDotScalarStepCost per K
// step past the last whole vector (scalar loads of A and B and an FMA). Dot products are taken
// when they cost at most kDotTailShare of the masked vector (measurements:
// docs/default_configs.md).
constexpr int64_t kDotColumnCost = 16;
constexpr int64_t kDotScalarStepCost = 3;
constexpr double kDotTailShare = 0.8;

class MatMulEmitter {
 public:
  MatMulEmitter(EmitContext& ec, AccessEmitter& access)
      : ec_(ec), access_(access), k_(ec.kernel), rank_(static_cast<int>(k_.domain.size())) {
    for (const ir::SymExpr& d : k_.domain) dims_.push_back(ec.Sym(d));
    for (const ir::Store& s : k_.stores) roots_.push_back(s.value);
    kdim_ = ec.Sym(k_.k);
    mr_ = std::max(1, k_.config.mr);
    nrv_ = std::max(1, k_.config.nr_vectors);
    dot_ = ir::MatMulDotForm(k_);
    // Packing copies one panel of B for a run of rows. When B moves along batch dims
    // (attention's k and v), the tile's rows are taken one batch entry at a time
    // (EmitBatchSegments) and the panel is packed from that entry's B.
    // In the dot-product form the packed panel is B transposed, and the packed rows use the
    // broadcast micro-kernel.
    pack_ = k_.config.pack_b && k_.config.panel_bytes > 0 && ec.lanes > 1;
    for (int d = 0; d + 2 < rank_; ++d) {
      if (ConstantValue(access_.Stride(k_.b, d)) != 0) batched_b_ = true;
    }
    // A batch entry's B in the broadcast form is a few hundred rows read once per row block:
    // copying it costs more than it saves (attention's p.v on 12x512x64: 126 -> 87 GFLOP/s on
    // one thread). Transposed (the dot form) it is packed: a dot product per output is dearer.
    if (batched_b_ && !dot_) pack_ = false;
    kblock_ = k_.config.kc > 0 && ir::MatMulCanBlockK(k_);
    if (kblock_) out_access_ = k_.stores[0].access;
    slab_ = MatMulASlabOf(k_);
    pack_a_ = slab_.rows > 0 && ec.lanes > 1;
    a_across_k_ = MatMulReadsAAcrossK(k_);
    unroll_ = std::max(1, k_.config.unroll);
    heavy_epilogue_ = HeavyEpilogue(k_.output);
    first_ = last_ = ec.b.getTrue();
    k_lo_ = ec.I64Const(0);
    k_hi_ = kdim_;
  }

  void Emit() {
    if (!pack_a_) {
      EmitKernel();
      return;
    }
    // A caller without the scratch gets A read in place by the lean micro-tiles.
    EmitIfElse(
        ec_, ec_.b.CreateIsNotNull(ec_.fn->getArg(3)), [&]() { EmitKernel(); },
        [&]() {
          pack_a_ = false;
          Lean([&]() { EmitKernel(); });
          pack_a_ = true;
        });
  }

  void EmitKernel() {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Value* one_row = b.CreateICmpEQ(b.CreateSub(ec_.hi[0], ec_.lo[0]), ec_.I64Const(1));
    if (k_.b_packed >= 0 && pack_) {
      // A tile of one row starting on a block over a prepacked B (M = 1 with constant weights:
      // matrix-vector) reads each packed column block front to back (SingleRowPacked); the
      // columns past the last full block, and every other tile, take the tile path.
      const int64_t block = k_.b_packed_block;
      llvm::Value* aligned =
          b.CreateICmpEQ(b.CreateSRem(ec_.lo[1], ec_.I64Const(block)), ec_.I64Const(0));
      EmitIfElse(
          ec_, b.CreateAnd(one_row, aligned),
          [&]() {
            llvm::Value* full_end = SingleRowPacked();
            llvm::Value* lo1 = ec_.lo[1];
            ec_.lo[1] = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, lo1, full_end);
            // The last columns (fewer than a block) of the one row: the lean micro-tiles.
            Lean([&]() {
              EmitIfElse(ec_, b.CreateICmpSLT(ec_.lo[1], ec_.hi[1]), [&]() { EmitTiles(); });
            });
            ec_.lo[1] = lo1;
          },
          [&]() { EmitTiles(); });
      return;
    }
    if (pack_ && !dot_) {
      // A tile of one row (M = 1: matrix-vector) sweeps B row by row in K blocks, its partial
      // sums in the scratch, instead of walking down B's columns (a new page every row).
      llvm::Value* scratch = ec_.fn->getArg(3);
      llvm::Value* fits =
          b.CreateICmpSLE(b.CreateMul(b.CreateSub(ec_.hi[1], ec_.lo[1]), ec_.I64Const(4)),
                          ec_.I64Const(k_.config.panel_bytes));
      llvm::Value* go = b.CreateAnd(b.CreateAnd(one_row, fits), b.CreateIsNotNull(scratch));
      EmitIfElse(
          ec_, go, [&]() { SingleRowKBlocked(scratch); }, [&]() { EmitTiles(); });
      return;
    }
    EmitTiles();
  }

  // Row lo[0] alone over the prepacked B's full column blocks in [lo1, hi1) (lo1 on a block):
  // each block's K rows are contiguous, read in order with kPackedRowKSteps K steps in flight
  // (each with its own nr_vectors accumulators), then summed for the epilogue. Returns the
  // column where the full blocks end (the tile's remaining columns are the caller's).
  llvm::Value* SingleRowPacked() {
    llvm::IRBuilder<>& b = ec_.b;
    const int lanes = ec_.lanes;
    const int mdim = rank_ - 2, ndim = rank_ - 1, kdim = rank_;
    const int64_t block = k_.b_packed_block;
    llvm::Value* m_extent = dims_[rank_ - 2];
    std::vector<llvm::Value*> batch_dims(dims_.begin(), dims_.end() - 2);
    std::vector<llvm::Value*> idx = ec_.Unflatten(b.CreateUDiv(ec_.lo[0], m_extent), batch_dims);
    idx.resize(rank_ + 1, nullptr);
    idx[mdim] = b.CreateURem(ec_.lo[0], m_extent);
    // Full blocks: [lo1, end) with end = min(hi1, N rounded down to blocks).
    llvm::Value* n_full =
        b.CreateMul(b.CreateSDiv(dims_[ndim], ec_.I64Const(block)), ec_.I64Const(block));
    llvm::Value* end = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, ec_.hi[1], n_full);
    end = b.CreateBinaryIntrinsic(
        llvm::Intrinsic::smax, ec_.lo[1],
        b.CreateAdd(ec_.lo[1],
                    b.CreateMul(b.CreateSDiv(b.CreateSub(end, ec_.lo[1]), ec_.I64Const(block)),
                                ec_.I64Const(block))));
    llvm::Type* vt = ec_.VecType(lanes);
    const int steps = kPackedRowKSteps;
    llvm::Value* packed = ec_.Buffer(k_.b_packed);
    llvm::AllocaInst* col = ec_.EntryAlloca(ec_.I64(), "mvpcol");
    b.CreateStore(ec_.lo[1], col);
    EmitChunkLoop(
        ec_, col, end, block,
        [&](llvm::Value* n0) {
          // Block n0 / block: element (k, c) at packed[(j * K + k) * block + c].
          llvm::Value* rows_at = b.CreateMul(
              b.CreateMul(b.CreateSDiv(n0, ec_.I64Const(block)), kdim_), ec_.I64Const(block));
          llvm::Value* rows = b.CreateInBoundsGEP(ec_.F32(), packed, rows_at);
          std::vector<llvm::AllocaInst*> acc(steps * nrv_);
          for (auto& a : acc) {
            a = ec_.EntryAlloca(vt, "mvpacc");
            b.CreateStore(llvm::ConstantFP::get(vt, 0.0), a);
          }
          // The loads of K step kk: A's element, the block's row of B.
          auto b_row = [&](llvm::Value* kk, int v) {
            return b.CreateAdd(b.CreateMul(kk, ec_.I64Const(block)),
                               ec_.I64Const(int64_t{v} * lanes));
          };
          CheckKSteps(ec_.I64Const(0), kdim_, [&](llvm::Value* kk) {
            std::vector<llvm::Value*> at = idx;
            at[kdim] = kk;
            access_.CheckLoad(k_.a, at, -1, lanes);
            for (int v : Ends(nrv_)) {
              ec_.Check(k_.b_packed, b.CreateAdd(rows_at, b_row(kk, v)), nullptr, lanes, nullptr,
                        /*store=*/false);
            }
          });
          // K steps [k, k + count), step s into accumulator set s.
          auto k_steps = [&](llvm::Value* k, int count) {
            for (int s = 0; s < count; ++s) {
              llvm::Value* kk = b.CreateAdd(k, ec_.I64Const(s));
              std::vector<llvm::Value*> at = idx;
              at[kdim] = kk;
              llvm::Value* a = access_.Load(k_.a, at, -1, lanes);
              for (int v = 0; v < nrv_; ++v) {
                llvm::Value* p = b.CreateInBoundsGEP(ec_.F32(), rows, b_row(kk, v));
                llvm::Value* bv = b.CreateAlignedLoad(vt, p, llvm::Align(4));
                llvm::AllocaInst* c = acc[s * nrv_ + v];
                b.CreateStore(EmitFMulAdd(b, a, bv, b.CreateLoad(vt, c)), c);
              }
            }
          };
          llvm::AllocaInst* kpos = ec_.EntryAlloca(ec_.I64(), "mvpk");
          b.CreateStore(ec_.I64Const(0), kpos);
          access_.HoistChecks(true);
          EmitChunkLoop(
              ec_, kpos, kdim_, steps, [&](llvm::Value* k) { k_steps(k, steps); },
              /*disable_unroll=*/true);
          EmitChunkLoop(
              ec_, kpos, kdim_, 1, [&](llvm::Value* k) { k_steps(k, 1); },
              /*disable_unroll=*/true);
          access_.HoistChecks(false);
          CheckTile(idx, {idx[mdim]}, n0, nrv_, lanes);
          access_.HoistChecks(true);
          for (int v = 0; v < nrv_; ++v) {
            llvm::Value* sum = b.CreateLoad(vt, acc[v]);
            for (int s = 1; s < steps; ++s) {
              sum = b.CreateFAdd(sum, b.CreateLoad(vt, acc[s * nrv_ + v]));
            }
            std::vector<llvm::Value*> at = idx;
            at[ndim] = b.CreateAdd(n0, ec_.I64Const(int64_t{v} * lanes));
            StoreResult(at, lanes, sum, /*epilogue=*/true);
          }
          access_.HoistChecks(false);
        },
        /*disable_unroll=*/true);
    return end;
  }

  // Row lo[0] alone: for each K block, every column chunk adds A[m, kb] . B[kb, chunk] to its
  // partial sums in `partial` (zeroed first); then the epilogue runs on the sums.
  void SingleRowKBlocked(llvm::Value* partial) {
    llvm::IRBuilder<>& b = ec_.b;
    const int lanes = ec_.lanes;
    const int mdim = rank_ - 2, ndim = rank_ - 1, kdim = rank_;
    llvm::Value* m_extent = dims_[rank_ - 2];
    std::vector<llvm::Value*> batch_dims(dims_.begin(), dims_.end() - 2);
    std::vector<llvm::Value*> idx = ec_.Unflatten(b.CreateUDiv(ec_.lo[0], m_extent), batch_dims);
    idx.resize(rank_ + 1, nullptr);
    idx[mdim] = b.CreateURem(ec_.lo[0], m_extent);
    llvm::Value* cols = b.CreateSub(ec_.hi[1], ec_.lo[1]);
    ec_.CheckCount(BoundsChecks::kScratch, ec_.I64Const(0), cols, /*store=*/true);
    b.CreateMemSet(partial, b.getInt8(0), b.CreateMul(cols, ec_.I64Const(4)), llvm::MaybeAlign(64));
    llvm::Value* kblocks = b.CreateSDiv(b.CreateAdd(kdim_, ec_.I64Const(kSingleRowKBlock - 1)),
                                        ec_.I64Const(kSingleRowKBlock));
    // Columns [lo1, hi1) in chunks of `nv` vectors of `width`, each chunk calling body(n0).
    auto chunks = [&](const std::function<void(llvm::Value*, int, int)>& body) {
      llvm::AllocaInst* col = ec_.EntryAlloca(ec_.I64(), "mvcol");
      b.CreateStore(ec_.lo[1], col);
      EmitChunkLoop(
          ec_, col, ec_.hi[1], int64_t{kSingleRowVectors} * lanes,
          [&](llvm::Value* n) { body(n, kSingleRowVectors, lanes); }, false);
      EmitChunkLoop(
          ec_, col, ec_.hi[1], lanes, [&](llvm::Value* n) { body(n, 1, lanes); }, true);
      if (lanes > 1) MaskedRemainder(col, ec_.hi[1], [&](llvm::Value* n) { body(n, 1, lanes); });
    };
    auto partial_at = [&](llvm::Value* n) {
      return b.CreateInBoundsGEP(ec_.F32(), partial, b.CreateSub(n, ec_.lo[1]));
    };
    auto check_partial = [&](llvm::Type* vt, llvm::Value* n, bool store) {
      if (!ec_.checked()) return;
      const int width =
          vt->isVectorTy()
              ? static_cast<int>(llvm::cast<llvm::FixedVectorType>(vt)->getNumElements())
              : 1;
      ec_.Check(BoundsChecks::kScratch, b.CreateSub(n, ec_.lo[1]), nullptr, width,
                access_.lane_mask(), store);
    };
    // The partial sums of `vt` at column n (only the masked tile's lanes, see Masked).
    auto load_partial = [&](llvm::Type* vt, llvm::Value* n) {
      check_partial(vt, n, /*store=*/false);
      return ec_.LoadLanes(vt, partial_at(n), access_.lane_mask());
    };
    auto store_partial = [&](llvm::Value* v, llvm::Value* n) {
      check_partial(v->getType(), n, /*store=*/true);
      ec_.StoreLanes(v, partial_at(n), access_.lane_mask());
    };
    EmitForLoop(
        ec_, ec_.I64Const(0), kblocks,
        [&](llvm::Value* kb) {
          llvm::Value* k_lo = b.CreateMul(kb, ec_.I64Const(kSingleRowKBlock));
          llvm::Value* k_hi = b.CreateBinaryIntrinsic(
              llvm::Intrinsic::smin, b.CreateAdd(k_lo, ec_.I64Const(kSingleRowKBlock)), kdim_);
          chunks([&](llvm::Value* n0, int nv, int width) {
            llvm::Type* vt = ec_.VecType(width);
            std::vector<llvm::AllocaInst*> acc(nv);
            for (int j = 0; j < nv; ++j) {
              acc[j] = ec_.EntryAlloca(vt, "mvacc");
              b.CreateStore(load_partial(vt, b.CreateAdd(n0, ec_.I64Const(int64_t{j} * width))),
                            acc[j]);
            }
            // A's element and B's row of K step kk: `load` loads, or checks.
            auto k_step = [&](llvm::Value* kk, bool load) {
              std::vector<llvm::Value*> at = idx;
              at[kdim] = kk;
              at[ndim] = nullptr;  // A's N stride is 0
              if (!load) access_.CheckLoad(k_.a, at, -1, width);
              llvm::Value* a = load ? access_.Load(k_.a, at, -1, width) : nullptr;
              at[mdim] = nullptr;  // B's M stride is 0
              for (int j = 0; j < nv; ++j) {
                at[ndim] = b.CreateAdd(n0, ec_.I64Const(int64_t{j} * width));
                if (!load) {
                  // Affine in j: the first and the last vector bound the others.
                  if (j == 0 || j == nv - 1) access_.CheckLoad(k_.b, at, ndim, width);
                  continue;
                }
                llvm::Value* bv = access_.Load(k_.b, at, ndim, width);
                b.CreateStore(EmitFMulAdd(b, a, bv, b.CreateLoad(vt, acc[j])), acc[j]);
              }
            };
            CheckKSteps(k_lo, k_hi, [&](llvm::Value* kk) { k_step(kk, /*load=*/false); });
            access_.HoistChecks(true);
            EmitForLoop(ec_, k_lo, k_hi, [&](llvm::Value* kk) { k_step(kk, /*load=*/true); });
            access_.HoistChecks(false);
            for (int j = 0; j < nv; ++j) {
              store_partial(b.CreateLoad(vt, acc[j]),
                            b.CreateAdd(n0, ec_.I64Const(int64_t{j} * width)));
            }
          });
        },
        /*disable_unroll=*/true);
    // The epilogue on the sums, and the stores.
    chunks([&](llvm::Value* n0, int nv, int width) {
      llvm::Type* vt = ec_.VecType(width);
      CheckTile(idx, {idx[mdim]}, n0, nv, width);
      access_.HoistChecks(true);
      for (int j = 0; j < nv; ++j) {
        std::vector<llvm::Value*> at = idx;
        at[ndim] = b.CreateAdd(n0, ec_.I64Const(int64_t{j} * width));
        llvm::Value* sum = load_partial(vt, at[ndim]);
        StoreResult(at, width, sum, /*epilogue=*/true);
      }
      access_.HoistChecks(false);
    });
  }

  // The tile range: column panels, K blocks and row blocks (see the file comment).
  void EmitTiles() {
    llvm::IRBuilder<>& b = ec_.b;
    const ir::TileConfig& cfg = k_.config;
    llvm::Value* k1 = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, kdim_, ec_.I64Const(1));
    kc_ = kblock_ ? b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, ec_.I64Const(cfg.kc), k1) : k1;
    llvm::Value* span = b.CreateSub(ec_.hi[1], ec_.lo[1]);
    // Column panels: panel = max(block, panel_bytes / (4 kc)) rounded down to whole blocks.
    const int64_t block = dot_ && !pack_ ? nrv_ : int64_t{nrv_} * ec_.lanes;
    llvm::Value* fit = nullptr;
    llvm::Value* panel = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, span, ec_.I64Const(1));
    if (cfg.panel_bytes > 0) {
      fit = b.CreateSDiv(ec_.I64Const(cfg.panel_bytes), b.CreateMul(kc_, ec_.I64Const(4)));
      fit = b.CreateMul(b.CreateSDiv(fit, ec_.I64Const(block)), ec_.I64Const(block));
      panel = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, fit, ec_.I64Const(block));
    }
    llvm::Value* panels =
        b.CreateSDiv(b.CreateAdd(span, b.CreateSub(panel, ec_.I64Const(1))), panel);
    llvm::Value* pack_fits = nullptr;  // packing possible for this tile (scratch, panel size)
    if (pack_ && fit != nullptr) {
      pack_fits = b.CreateAnd(b.CreateIsNotNull(ec_.fn->getArg(3)),
                              b.CreateICmpSGE(fit, ec_.I64Const(block)));
    }
    auto sweep_panels = [&](llvm::Value* row_lo, llvm::Value* row_hi) {
      EmitForLoop(
          ec_, ec_.I64Const(0), panels,
          [&](llvm::Value* p) {
            col_lo_ = b.CreateAdd(ec_.lo[1], b.CreateMul(p, panel));
            col_hi_ = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateAdd(col_lo_, panel),
                                              ec_.hi[1]);
            SweepKBlocks(row_lo, row_hi, pack_fits);
          },
          /*disable_unroll=*/true);
    };
    if (cfg.loop_order == ir::LoopOrder::kRowBlocksOuter && cfg.mc > 0) {
      const int64_t mc = (cfg.mc + mr_ - 1) / mr_ * mr_;
      EmitBatchSegments([&](llvm::Value* seg_lo, llvm::Value* seg_hi) {
        llvm::Value* rows = b.CreateSub(seg_hi, seg_lo);
        llvm::Value* row_blocks =
            b.CreateSDiv(b.CreateAdd(rows, ec_.I64Const(mc - 1)), ec_.I64Const(mc));
        EmitForLoop(
            ec_, ec_.I64Const(0), row_blocks,
            [&](llvm::Value* rb) {
              llvm::Value* lo = b.CreateAdd(seg_lo, b.CreateMul(rb, ec_.I64Const(mc)));
              llvm::Value* hi = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin,
                                                        b.CreateAdd(lo, ec_.I64Const(mc)), seg_hi);
              sweep_panels(lo, hi);
            },
            /*disable_unroll=*/true);
      });
      return;
    }
    EmitBatchSegments(sweep_panels);
  }

  // rows(lo, hi) over the tile's rows: all of them at once, or, when a packed B moves along
  // batch dims, one batch entry's rows at a time with b_batch_ set to that entry's index.
  void EmitBatchSegments(const std::function<void(llvm::Value*, llvm::Value*)>& rows) {
    if (!(pack_ && batched_b_)) {
      rows(ec_.lo[0], ec_.hi[0]);
      return;
    }
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Value* m_extent =
        b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, dims_[rank_ - 2], ec_.I64Const(1));
    std::vector<llvm::Value*> batch_dims(dims_.begin(), dims_.end() - 2);
    llvm::Value* entries = b.CreateSub(
        b.CreateUDiv(b.CreateAdd(ec_.hi[0], b.CreateSub(m_extent, ec_.I64Const(1))), m_extent),
        b.CreateUDiv(ec_.lo[0], m_extent));
    llvm::Value* first = b.CreateUDiv(ec_.lo[0], m_extent);
    EmitForLoop(
        ec_, ec_.I64Const(0), entries,
        [&](llvm::Value* e) {
          llvm::Value* entry = b.CreateAdd(first, e);
          llvm::Value* start = b.CreateMul(entry, m_extent);
          llvm::Value* lo = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, start, ec_.lo[0]);
          llvm::Value* hi = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin,
                                                    b.CreateAdd(start, m_extent), ec_.hi[0]);
          b_batch_ = ec_.Unflatten(entry, batch_dims);
          rows(lo, hi);
          b_batch_.clear();
        },
        /*disable_unroll=*/true);
  }

  // Rows [row_lo, row_hi) over the current panel, one K block at a time.
  void SweepKBlocks(llvm::Value* row_lo, llvm::Value* row_hi, llvm::Value* pack_fits) {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Value* pack = nullptr;
    if (pack_fits != nullptr) {
      // Packing pays off when the rows are enough to reuse the panel.
      pack = b.CreateAnd(pack_fits, b.CreateICmpSGE(b.CreateSub(row_hi, row_lo),
                                                    ec_.I64Const(kPackMinRowBlocks * mr_)));
    }
    auto packed_rows = [&]() {
      PackPanel(ec_.fn->getArg(3));
      packed_ = ec_.fn->getArg(3);
      const bool dot = dot_;
      dot_ = false;  // packed rows always use the broadcast micro-kernel
      EmitRows(row_lo, row_hi);
      dot_ = dot;
      packed_ = nullptr;
    };
    auto k_blocks = [&](const std::function<void()>& rows) {
      if (!kblock_) {
        rows();
        return;
      }
      llvm::Value* kblocks = b.CreateSDiv(
          b.CreateAdd(b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, kdim_, ec_.I64Const(1)),
                      b.CreateSub(kc_, ec_.I64Const(1))),
          kc_);
      EmitForLoop(
          ec_, ec_.I64Const(0), kblocks,
          [&](llvm::Value* kb) {
            k_lo_ = b.CreateMul(kb, kc_);
            k_hi_ = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateAdd(k_lo_, kc_), kdim_);
            first_ = b.CreateICmpEQ(kb, ec_.I64Const(0));
            last_ = b.CreateICmpEQ(kb, b.CreateSub(kblocks, ec_.I64Const(1)));
            rows();
          },
          /*disable_unroll=*/true);
      k_lo_ = ec_.I64Const(0);
      k_hi_ = kdim_;
      first_ = last_ = b.getTrue();
    };
    // The dot-product form's direct rows take K whole: each K block would cost every output a
    // horizontal sum and a round trip through the output.
    auto direct_rows = [&]() {
      if (dot_) {
        EmitRows(row_lo, row_hi);
      } else {
        k_blocks([&]() { EmitRows(row_lo, row_hi); });
      }
    };
    auto panel_rows = [&]() {
      if (pack == nullptr) {
        direct_rows();
        return;
      }
      EmitIfElse(
          ec_, pack, [&]() { k_blocks(packed_rows); }, direct_rows);
    };
    if (k_.b_packed < 0 || !pack_) {
      panel_rows();
      return;
    }
    // B prepacked by the plan (a constant weight): every row reads it, once the tile's columns
    // start on a block (they do when the plan splits the grid). Any other range is still right
    // but reads B directly with the lean micro-tiles (lean_). Full copies of the micro-tiles
    // here and for the one-row remainder (Emit) were 60% of a prepacked kernel's compile time:
    // first calls of constant-weight matmuls 2.4-2.9x faster (128x3072x768 467 -> 191 ms, the
    // demo block at batch 4 2.7 -> 1.5 s, 1 thread), their run times unchanged.
    const int64_t block = int64_t{nrv_} * ec_.lanes;
    llvm::Value* aligned =
        b.CreateICmpEQ(b.CreateSRem(ec_.lo[1], ec_.I64Const(block)), ec_.I64Const(0));
    EmitIfElse(
        ec_, aligned,
        [&]() {
          k_blocks([&]() {
            packed_ = ec_.Buffer(k_.b_packed);
            prepacked_ = true;
            const bool dot = dot_;
            dot_ = false;
            EmitRows(row_lo, row_hi);
            dot_ = dot;
            prepacked_ = false;
            packed_ = nullptr;
          });
        },
        [&]() { Lean(direct_rows); });
  }

  // An index into B for packing: the current batch entry's (EmitBatchSegments), M unset.
  std::vector<llvm::Value*> PanelIndex() const {
    std::vector<llvm::Value*> idx(rank_ + 1, nullptr);
    for (size_t d = 0; d < b_batch_.size(); ++d) idx[d] = b_batch_[d];
    return idx;
  }

  // Copies the panel's full column blocks of B, rows [k_lo_, k_hi_), into `dst`: block j's
  // row k is dst[(j * kc + k - k_lo) * block + 0 .. block), so the micro-kernel reads B
  // contiguously.
  void PackPanel(llvm::Value* dst) {
    llvm::IRBuilder<>& b = ec_.b;
    const int lanes = ec_.lanes;
    const int64_t block = int64_t{nrv_} * lanes;
    const int ndim = rank_ - 1, kdim = rank_;
    llvm::Value* blocks = b.CreateSDiv(b.CreateSub(col_hi_, col_lo_), ec_.I64Const(block));
    llvm::Value* k_lo = k_lo_;
    if (dot_) {
      // B stored [N, K]: column n's K values are contiguous. `lanes` columns x `lanes` K values
      // are loaded as vectors along K and transposed in registers into packed rows; the K tail
      // (fewer than `lanes` values) is copied element by element. Each group of `lanes` columns
      // is swept along the K block before the next, so the copy reads `lanes` rows of B in
      // order rather than all nr_vectors x lanes of the block at once (measurements:
      // docs/default_configs.md).
      EmitForLoop(ec_, ec_.I64Const(0), blocks, [&](llvm::Value* j) {
        llvm::Value* n0 = b.CreateAdd(col_lo_, b.CreateMul(j, ec_.I64Const(block)));
        llvm::Value* row0 = b.CreateSub(b.CreateMul(j, kc_), k_lo);
        llvm::AllocaInst* pos = ec_.EntryAlloca(ec_.I64(), "packk");
        b.CreateStore(k_lo, pos);
        for (int g = 0; g < nrv_ && lanes > 1; ++g) {
          b.CreateStore(k_lo, pos);
          EmitChunkLoop(
              ec_, pos, k_hi_, lanes,
              [&](llvm::Value* kk) {
                std::vector<llvm::Value*> v(lanes);
                for (int c = 0; c < lanes; ++c) {
                  std::vector<llvm::Value*> idx = PanelIndex();
                  idx[kdim] = kk;
                  idx[ndim] = b.CreateAdd(n0, ec_.I64Const(int64_t{g} * lanes + c));
                  v[c] = access_.Load(k_.b, idx, kdim, lanes);
                }
                v = Transpose(v);
                for (int t = 0; t < lanes; ++t) {
                  llvm::Value* at =
                      b.CreateAdd(b.CreateMul(b.CreateAdd(row0, b.CreateAdd(kk, ec_.I64Const(t))),
                                              ec_.I64Const(block)),
                                  ec_.I64Const(int64_t{g} * lanes));
                  ec_.Check(BoundsChecks::kScratch, at, nullptr, lanes, nullptr, true);
                  b.CreateAlignedStore(v[t], b.CreateInBoundsGEP(ec_.F32(), dst, at),
                                       llvm::Align(lanes * 4));
                }
              },
              /*disable_unroll=*/true);
        }
        llvm::Value* tail = b.CreateLoad(ec_.I64(), pos);
        EmitForLoop(ec_, ec_.I64Const(0), ec_.I64Const(block), [&](llvm::Value* c) {
          EmitForLoop(ec_, tail, k_hi_, [&](llvm::Value* kk) {
            std::vector<llvm::Value*> idx = PanelIndex();
            idx[kdim] = kk;
            idx[ndim] = b.CreateAdd(n0, c);
            llvm::Value* value = access_.Load(k_.b, idx, -1, 1);
            llvm::Value* at =
                b.CreateAdd(b.CreateMul(b.CreateAdd(row0, kk), ec_.I64Const(block)), c);
            ec_.Check(BoundsChecks::kScratch, at, nullptr, 1, nullptr, true);
            b.CreateAlignedStore(value, b.CreateInBoundsGEP(ec_.F32(), dst, at), llvm::Align(4));
          });
        });
      });
      return;
    }
    // config.pack_prefetch_rows: each row's copy first prefetches its lines that many rows on.
    const int64_t ahead_rows = k_.config.pack_prefetch_rows;
    llvm::Value* source = ec_.Buffer(ec_.kernel.accesses[k_.b].buffer);
    EmitForLoop(ec_, ec_.I64Const(0), blocks, [&](llvm::Value* j) {
      llvm::Value* n0 = b.CreateAdd(col_lo_, b.CreateMul(j, ec_.I64Const(block)));
      llvm::Value* row0 = b.CreateSub(b.CreateMul(j, kc_), k_lo);
      EmitForLoop(ec_, k_lo, k_hi_, [&](llvm::Value* kk) {
        std::vector<llvm::Value*> idx = PanelIndex();  // B's M stride is 0
        idx[kdim] = kk;
        llvm::Value* at = b.CreateMul(b.CreateAdd(row0, kk), ec_.I64Const(block));
        for (int v = 0; v < nrv_; ++v) {
          idx[ndim] = b.CreateAdd(n0, ec_.I64Const(int64_t{v} * lanes));
          if (ahead_rows > 0 && (int64_t{v} * lanes) % kLineFloats == 0) {
            std::vector<llvm::Value*> ahead = idx;
            ahead[kdim] = b.CreateAdd(kk, ec_.I64Const(ahead_rows));
            // A GEP without inbounds: past B's last rows the address lies past B.
            EmitPrefetch(b, b.CreateGEP(ec_.F32(), source, access_.Index(k_.b, ahead)), 3);
          }
          llvm::Value* value = access_.Load(k_.b, idx, ndim, lanes);
          llvm::Value* to = b.CreateAdd(at, ec_.I64Const(int64_t{v} * lanes));
          ec_.Check(BoundsChecks::kScratch, to, nullptr, lanes, nullptr, true);
          llvm::Value* ptr = b.CreateInBoundsGEP(ec_.F32(), dst, to);
          b.CreateAlignedStore(value, ptr, llvm::Align(lanes * 4));
        }
      });
    });
  }

  // Rows [row_lo, row_hi) of the tile range, over the columns [col_lo_, col_hi_). With an A
  // slab (MatMulASlab), in runs of at most slab_.rows rows of one batch entry, each copied to
  // the slab for the current K block before its micro-tiles read it there.
  void EmitRows(llvm::Value* row_lo, llvm::Value* row_hi) {
    if (!pack_a_ || lean_) {
      EmitRowRange(row_lo, row_hi);
      return;
    }
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Value* m_extent = dims_[rank_ - 2];
    std::vector<llvm::Value*> batch_dims(dims_.begin(), dims_.end() - 2);
    llvm::AllocaInst* pos = ec_.EntryAlloca(ec_.I64(), "slabrow");
    b.CreateStore(row_lo, pos);
    EmitWhileLoop(ec_, pos, row_hi, [&](llvm::Value* lo) {
      llvm::Value* m = b.CreateURem(lo, m_extent);
      llvm::Value* hi = b.CreateBinaryIntrinsic(
          llvm::Intrinsic::smin,
          b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateAdd(lo, ec_.I64Const(slab_.rows)),
                                  row_hi),
          b.CreateAdd(b.CreateSub(lo, m), m_extent));
      std::vector<llvm::Value*> idx = ec_.Unflatten(b.CreateUDiv(lo, m_extent), batch_dims);
      idx.resize(rank_ + 1, nullptr);
      idx[rank_ - 2] = m;
      slab_m0_ = m;
      PackASlab(idx, b.CreateSub(hi, lo));
      EmitRowRange(lo, hi);
      slab_m0_ = nullptr;
      b.CreateStore(hi, pos);
    });
  }

  // Copies A's `rows` rows from idx (one batch entry's) over the K block [k_lo_, k_hi_) into
  // the slab, row m's K values at SlabIndex(k, m). Squares of `lanes` rows x `lanes` K steps
  // are loaded as vectors along A's contiguous M and transposed in registers (the last square
  // may run past `rows`, into the slab's spare rows); the K tail (fewer than `lanes` steps) is
  // copied element by element.
  void PackASlab(std::vector<llvm::Value*> idx, llvm::Value* rows) {
    llvm::IRBuilder<>& b = ec_.b;
    const int mdim = rank_ - 2, kdim = rank_;
    const int lanes = ec_.lanes;
    llvm::Value* scratch = ec_.fn->getArg(3);
    llvm::Value* m0 = idx[mdim];
    idx[rank_ - 1] = nullptr;  // A's N stride is 0
    CheckKSteps(k_lo_, k_hi_, [&](llvm::Value* kk) {
      std::vector<llvm::Value*> at = idx;
      at[kdim] = kk;
      for (llvm::Value* m : {m0, b.CreateSub(b.CreateAdd(m0, rows), ec_.I64Const(1))}) {
        at[mdim] = m;
        access_.CheckLoad(k_.a, at, -1, 1);
      }
    });
    access_.HoistChecks(true);
    llvm::Value* squares =
        b.CreateSDiv(b.CreateAdd(rows, ec_.I64Const(lanes - 1)), ec_.I64Const(lanes));
    EmitForLoop(
        ec_, ec_.I64Const(0), squares,
        [&](llvm::Value* sq) {
          llvm::Value* c = b.CreateMul(sq, ec_.I64Const(lanes));
          llvm::Value* count = b.CreateSub(rows, c);
          // Lanes past `rows` are not read (a mask of all lanes for a full square).
          llvm::Value* mask = ec_.LaneMask(
              b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, count, ec_.I64Const(lanes)), lanes);
          idx[mdim] = b.CreateAdd(m0, c);
          auto load = [&](llvm::Value* kk) {
            idx[kdim] = kk;
            access_.MaskLanes(mask);
            llvm::Value* v = access_.Load(k_.a, idx, mdim, lanes);
            access_.MaskLanes(nullptr);
            return v;
          };
          llvm::AllocaInst* pos = ec_.EntryAlloca(ec_.I64(), "slabk");
          b.CreateStore(k_lo_, pos);
          EmitChunkLoop(
              ec_, pos, k_hi_, lanes,
              [&](llvm::Value* kk) {
                std::vector<llvm::Value*> v(lanes);
                for (int t = 0; t < lanes; ++t) v[t] = load(b.CreateAdd(kk, ec_.I64Const(t)));
                v = Transpose(v);
                for (int r = 0; r < lanes; ++r) {
                  llvm::Value* at = SlabIndex(kk, b.CreateAdd(idx[mdim], ec_.I64Const(r)));
                  ec_.Check(BoundsChecks::kScratch, at, nullptr, lanes, nullptr, true);
                  b.CreateAlignedStore(v[r], b.CreateInBoundsGEP(ec_.F32(), scratch, at),
                                       llvm::Align(4));
                }
              },
              /*disable_unroll=*/true);
          EmitForLoop(ec_, b.CreateLoad(ec_.I64(), pos), k_hi_, [&](llvm::Value* kk) {
            llvm::Value* v = load(kk);
            for (int r = 0; r < lanes; ++r) {
              llvm::Value* at = SlabIndex(kk, b.CreateAdd(idx[mdim], ec_.I64Const(r)));
              ec_.Check(BoundsChecks::kScratch, at, nullptr, 1, nullptr, true);
              b.CreateAlignedStore(b.CreateExtractElement(v, r),
                                   b.CreateInBoundsGEP(ec_.F32(), scratch, at), llvm::Align(4));
            }
          });
        },
        /*disable_unroll=*/true);
    access_.HoistChecks(false);
  }

  // Rows [row_lo, row_hi) of the tile range, A read in place or from the slab (slab_m0_).
  void EmitRowRange(llvm::Value* row_lo, llvm::Value* row_hi) {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Value* m_extent = dims_[rank_ - 2];
    std::vector<llvm::Value*> batch_dims(dims_.begin(), dims_.end() - 2);
    llvm::AllocaInst* pos = ec_.EntryAlloca(ec_.I64(), "row");
    b.CreateStore(row_lo, pos);
    llvm::BasicBlock* header = llvm::BasicBlock::Create(ec_.ctx, "rows", ec_.fn);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(ec_.ctx, "rows.body", ec_.fn);
    llvm::BasicBlock* single = llvm::BasicBlock::Create(ec_.ctx, "rows.single", ec_.fn);
    llvm::BasicBlock* latch = llvm::BasicBlock::Create(ec_.ctx, "rows.latch", ec_.fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ec_.ctx, "rows.exit", ec_.fn);
    b.CreateBr(header);
    b.SetInsertPoint(header);
    llvm::Value* r = b.CreateLoad(ec_.I64(), pos);
    b.CreateCondBr(b.CreateICmpSLT(r, row_hi), body, exit);

    b.SetInsertPoint(body);
    llvm::Value* m = b.CreateURem(r, m_extent);
    std::vector<llvm::Value*> idx = ec_.Unflatten(b.CreateUDiv(r, m_extent), batch_dims);
    idx.resize(rank_ + 1, nullptr);
    idx[rank_ - 2] = m;
    spread_row_ = b.CreateSub(r, row_lo);
    spread_span_ = b.CreateSub(row_hi, row_lo);
    if (lean_) {
      b.CreateBr(single);
    } else {
      llvm::BasicBlock* full = llvm::BasicBlock::Create(ec_.ctx, "rows.full", ec_.fn);
      llvm::BasicBlock* tail = llvm::BasicBlock::Create(ec_.ctx, "rows.tail", ec_.fn);
      llvm::Value* avail = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateSub(row_hi, r),
                                                   b.CreateSub(m_extent, m));
      b.CreateCondBr(b.CreateICmpSGE(avail, ec_.I64Const(mr_)), full, tail);

      b.SetInsertPoint(full);
      RowBlock(idx, mr_);
      b.CreateStore(b.CreateAdd(r, ec_.I64Const(mr_)), pos);
      b.CreateBr(latch);

      // The M tail: a block of TailRows() rows where that many remain, then single rows. A
      // single row's nr_vectors accumulators expose the FMA latency and load B once per row
      // (M = 128 with mr = 6: its last 2 rows took 6% of the time, 1 thread).
      b.SetInsertPoint(tail);
      const int tail_rows = TailRows();
      if (tail_rows > 1) {
        llvm::BasicBlock* block = llvm::BasicBlock::Create(ec_.ctx, "rows.tailblock", ec_.fn);
        b.CreateCondBr(b.CreateICmpSGE(avail, ec_.I64Const(tail_rows)), block, single);
        b.SetInsertPoint(block);
        RowBlock(idx, tail_rows);
        b.CreateStore(b.CreateAdd(r, ec_.I64Const(tail_rows)), pos);
        b.CreateBr(latch);
      } else {
        b.CreateBr(single);
      }
    }

    b.SetInsertPoint(single);
    RowBlock(idx, 1);
    b.CreateStore(b.CreateAdd(r, ec_.I64Const(1)), pos);
    b.CreateBr(latch);

    b.SetInsertPoint(latch);
    llvm::BranchInst* back = b.CreateBr(header);
    back->setMetadata(llvm::LLVMContext::MD_loop, ec_.LoopMetadata(true));
    b.SetInsertPoint(exit);
    spread_row_ = spread_span_ = nullptr;
  }

 private:
  // The first and the last of n things (one when n is 1): where the bounds checks of an index
  // affine in their number are made.
  static std::vector<int> Ends(int n) {
    return n > 1 ? std::vector<int>{0, n - 1} : std::vector<int>{0};
  }

  // Checked kernels: the bounds checks `checks(k)` emits for the loads of one K step, made for
  // the first and the last step of [k_lo, k_hi) before the K loop (when it runs) instead of at
  // every step, which then loads unchecked (AccessEmitter::HoistChecks): every load's index is
  // affine in k, so the steps between touch nothing outside the range of those two. Likewise
  // only the first and the last row of A and vector of B are checked (Ends).
  void CheckKSteps(llvm::Value* k_lo, llvm::Value* k_hi,
                   const std::function<void(llvm::Value* k)>& checks) {
    if (!ec_.checked()) return;
    llvm::IRBuilder<>& b = ec_.b;
    EmitIfElse(ec_, b.CreateICmpSLT(k_lo, k_hi), [&]() {
      ec_.CheckGroup([&]() {
        checks(k_lo);
        checks(b.CreateSub(k_hi, ec_.I64Const(1)));
      });
    });
  }

  // Checked kernels: the bounds checks of the loads and stores that put a tile's results at
  // rows m and `nv` vectors of `width` from column n0 (the epilogue's loads and stores, the
  // partial sums of K blocks), made for the first and last row and vector only: each index is
  // affine in the row and the column, so the others lie inside those ranges. The caller then
  // emits those loads and stores with the checks hoisted (AccessEmitter::HoistChecks).
  void CheckTile(std::vector<llvm::Value*> idx, const std::vector<llvm::Value*>& m, llvm::Value* n0,
                 int nv, int width) {
    if (!ec_.checked()) return;
    llvm::IRBuilder<>& b = ec_.b;
    const int mdim = rank_ - 2, ndim = rank_ - 1, kdim = rank_;
    std::map<int, bool> accesses;  // access -> stored
    for (const ir::Store& st : k_.stores) accesses[st.access] = true;
    if (kblock_) accesses[out_access_] = true;
    for (const ir::ExprNode& node : k_.output) {
      if (node.op == ir::ExprOp::kLoad) accesses.emplace(node.access, false);
    }
    idx[kdim] = nullptr;
    ec_.CheckGroup([&]() {
      for (const auto& [access, stored] : accesses) {
        for (int r : Ends(static_cast<int>(m.size()))) {
          for (int v : Ends(nv)) {
            idx[mdim] = m[r];
            idx[ndim] = b.CreateAdd(n0, ec_.I64Const(int64_t{v} * width));
            SelectVectorMask(v, nv);
            access_.CheckAccess(access, idx, ndim, VectorWidth(v, nv, width), stored);
          }
        }
      }
    });
  }

  // body() emitted with the lean micro-tiles (lean_).
  void Lean(const std::function<void()>& body) {
    const bool was = lean_;
    lean_ = true;
    body();
    lean_ = was;
  }

  // Rows of the M tail's one multi-row block: M mod mr for a static M (each batch entry's
  // tail, and every tile's when the plan's row grain is a multiple of mr), else 2.
  int TailRows() const {
    const std::optional<int64_t> m = ConstantValue(dims_[rank_ - 2]);
    return m.has_value() ? static_cast<int>(*m % mr_) : std::min(2, mr_ - 1);
  }

  // Rows idx[rank-2] .. +rows-1 of one batch entry, all columns of the tile range.
  void RowBlock(const std::vector<llvm::Value*>& idx, int rows) {
    if (dot_) {
      DotRowBlock(idx, rows);
      return;
    }
    const int lanes = ec_.lanes;
    llvm::AllocaInst* col = ec_.EntryAlloca(ec_.I64(), "col");
    ec_.b.CreateStore(col_lo_, col);
    if (lean_) {
      EmitChunkLoop(
          ec_, col, col_hi_, lanes, [&](llvm::Value* n) { MicroKernel(idx, n, rows, 1, lanes); },
          true);
      if (lanes > 1) {
        MaskedRemainder(col, col_hi_, [&](llvm::Value* n) { MicroKernel(idx, n, rows, 1, lanes); });
      }
      return;
    }
    if (rows == 1 && packed_ == nullptr && kSingleRowVectors > nrv_) {
      // One row (M = 1, or the M tail): more accumulators in flight, B streams through once.
      EmitChunkLoop(
          ec_, col, col_hi_, int64_t{kSingleRowVectors} * lanes,
          [&](llvm::Value* n) { MicroKernel(idx, n, 1, kSingleRowVectors, lanes); }, false);
    }
    EmitChunkLoop(
        ec_, col, col_hi_, int64_t{nrv_} * lanes,
        [&](llvm::Value* n) { MicroKernel(idx, n, rows, nrv_, lanes); }, false);
    const int rest = RestVectors();
    const int tail = TailColumns();
    if (rest > 0 && tail > 0 && rest < nrv_ && !heavy_epilogue_ && !DotTail()) {
      // The whole vectors past the last block and the masked last columns in one micro-tile
      // (its last vector masked): its A broadcasts serve them all. A range that ends
      // elsewhere leaves other columns, which the tiles below take.
      llvm::IRBuilder<>& b = ec_.b;
      llvm::Value* n = b.CreateLoad(ec_.I64(), col);
      EmitIfElse(
          ec_, b.CreateICmpEQ(b.CreateSub(col_hi_, n), ec_.I64Const(int64_t{rest} * lanes + tail)),
          [&]() {
            MaskLastVector(NarrowsTail(), [&]() { MicroKernel(idx, n, rows, rest + 1, lanes); });
          },
          [&]() { RestColumns(idx, rows, col, rest); });
      return;
    }
    RestColumns(idx, rows, col, rest);
  }

  // The columns [*col, col_hi_) past the last full block: the whole vectors of RestVectors in
  // one micro-tile when the range has them, single vectors, and the masked last columns.
  void RestColumns(const std::vector<llvm::Value*>& idx, int rows, llvm::AllocaInst* col,
                   int rest) {
    const int lanes = ec_.lanes;
    if (rest > 1) {
      // The whole vectors a static N leaves past its last block, in one micro-tile: its A
      // broadcasts serve them all, where single vectors would load them once each.
      EmitChunkLoop(
          ec_, col, col_hi_, int64_t{rest} * lanes,
          [&](llvm::Value* n) { MicroKernel(idx, n, rows, rest, lanes); }, true);
    }
    if (nrv_ > 1) {
      EmitChunkLoop(
          ec_, col, col_hi_, lanes, [&](llvm::Value* n) { MicroKernel(idx, n, rows, 1, lanes); },
          true);
    }
    if (DotTail()) {
      EmitChunkLoop(
          ec_, col, col_hi_, 1, [&](llvm::Value* n) { DotKernel(idx, n, rows, 1); }, true);
    } else if (NarrowsTail()) {
      // A range that ends at N leaves the static tail: one narrow vector; others the masked one.
      llvm::IRBuilder<>& b = ec_.b;
      llvm::Value* n = b.CreateLoad(ec_.I64(), col);
      EmitIfElse(
          ec_, b.CreateICmpEQ(b.CreateSub(col_hi_, n), ec_.I64Const(TailColumns())),
          [&]() { MaskLastVector(true, [&]() { MicroKernel(idx, n, rows, 1, lanes); }); },
          [&]() {
            MaskedRemainder(col, col_hi_,
                            [&](llvm::Value* n) { MicroKernel(idx, n, rows, 1, lanes); });
          });
    } else if (lanes > 1) {
      MaskedRemainder(col, col_hi_, [&](llvm::Value* n) { MicroKernel(idx, n, rows, 1, lanes); });
    }
  }

  // Whether a static N's tail columns take a vector of half the lanes (config.narrow_tail):
  // at most half a 16-lane vector, and no heavy epilogue (its call takes whole vectors).
  bool NarrowsTail() const {
    const int tail = TailColumns();
    return k_.config.narrow_tail && ec_.lanes == 16 && tail > 0 && tail <= ec_.lanes / 2 &&
           !heavy_epilogue_;
  }

  // body() emitted with its micro-tile's last vector alone masked to a static N's tail
  // columns (SelectVectorMask), at half the lanes when `narrow` (NarrowsTail).
  void MaskLastVector(bool narrow, const std::function<void()>& body) {
    narrow_last_ = narrow;
    last_vector_mask_ =
        ec_.HeldLaneMask(ec_.I64Const(TailColumns()), narrow ? ec_.lanes / 2 : ec_.lanes);
    body();
    last_vector_mask_ = nullptr;
    narrow_last_ = false;
    access_.MaskLanes(nullptr);
  }

  // Whether the columns past the last whole vector are taken one at a time as dot products
  // along K (DotKernel) rather than as one masked vector, whose few useful lanes cost a whole
  // FMA per row and K step. For a static N's tail, a static K (each K block's length with K
  // blocking) and A contiguous along K (its rows load as vectors; B's column is read lane by
  // lane, once per K vector for all the tile's rows), when the cost model above favours them.
  bool DotTail() const {
    const int64_t tail = TailColumns();
    if (lean_ || ec_.lanes <= 1 || tail == 0 || !k_.k.IsConstant() ||
        ConstantValue(access_.Stride(k_.a, rank_)) != 1) {
      return false;
    }
    const int64_t k = kblock_ ? std::min(k_.k.constant(), k_.config.kc) : k_.k.constant();
    const int64_t dot =
        tail * (k / ec_.lanes + kDotColumnCost + kDotScalarStepCost * (k % ec_.lanes));
    return static_cast<double>(dot) <= kDotTailShare * static_cast<double>(k);
  }

  // The columns of a static N past its last whole vector (0 for a symbolic N).
  int TailColumns() const {
    const ir::SymExpr& n = k_.domain.back();
    return n.IsConstant() ? static_cast<int>(n.constant() % ec_.lanes) : 0;
  }

  // With a masked last vector (last_vector_mask_), the mask the accesses of vector j of nv
  // take: the last one's, none for the others.
  void SelectVectorMask(int j, int nv) {
    if (last_vector_mask_ != nullptr) access_.MaskLanes(j == nv - 1 ? last_vector_mask_ : nullptr);
  }

  // The whole vectors of a static N past its last block of nrv_ vectors (0 for a symbolic N):
  // the columns of a range that ends at N end with them when the range starts on a block. A
  // range that ends otherwise may have fewer left, which its single vectors then take.
  int RestVectors() const {
    const ir::SymExpr& n = k_.domain.back();
    if (!n.IsConstant() || nrv_ <= 1) return 0;
    const int64_t block = int64_t{nrv_} * ec_.lanes;
    return static_cast<int>(n.constant() % block / ec_.lanes);
  }

  // The last columns [*col, hi) (fewer than a vector), if any: body(n) once with n = *col, its
  // vectors masked to those columns (Masked).
  void MaskedRemainder(llvm::AllocaInst* col, llvm::Value* hi,
                       const std::function<void(llvm::Value* n)>& body) {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Value* n = b.CreateLoad(ec_.I64(), col);
    llvm::Value* count = b.CreateSub(hi, n);
    EmitIfElse(ec_, b.CreateICmpSGT(count, ec_.I64Const(0)),
               [&]() { Masked(count, ec_.lanes, [&]() { body(n); }); });
  }

  // Emits body() with its vectors of `width` limited to their first `count` lanes: the
  // accesses' loads and stores along N are masked (AccessEmitter::MaskLanes), and so is a
  // heavy epilogue's call (CallEpilogue).
  void Masked(llvm::Value* count, int width, const std::function<void()>& body) {
    access_.MaskLanes(ec_.HeldLaneMask(count, width));
    lane_count_ = count;
    body();
    access_.MaskLanes(nullptr);
    lane_count_ = nullptr;
  }

  void MicroKernel(std::vector<llvm::Value*> idx, llvm::Value* n0, int rows, int nv, int width) {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Type* vt = ec_.VecType(width);
    const int mdim = rank_ - 2, ndim = rank_ - 1, kdim = rank_;
    llvm::Value* m0 = idx[mdim];
    std::vector<llvm::Value*> m(rows), n(nv);
    for (int i = 0; i < rows; ++i) m[i] = b.CreateAdd(m0, ec_.I64Const(i));
    for (int j = 0; j < nv; ++j) n[j] = b.CreateAdd(n0, ec_.I64Const(int64_t{j} * width));
    std::vector<llvm::AllocaInst*> acc(rows * nv);
    std::vector<llvm::Type*> vts(nv);
    for (int j = 0; j < nv; ++j) vts[j] = ec_.VecType(VectorWidth(j, nv, width));
    for (size_t a = 0; a < acc.size(); ++a) {
      llvm::Type* t = vts[a % nv];
      acc[a] = ec_.EntryAlloca(t, "mmacc");
      b.CreateStore(llvm::ConstantFP::get(t, 0.0), acc[a]);
    }
    auto at_output = [&](int i, int j) {
      idx[kdim] = nullptr;
      idx[mdim] = m[i];
      idx[ndim] = n[j];
    };
    CheckTile(idx, m, n0, nv, width);
    if (kblock_) {
      // A later K block continues the partial sums the previous one left in the output.
      access_.HoistChecks(true);
      EmitIfElse(ec_, b.CreateNot(first_), [&]() {
        for (int i = 0; i < rows; ++i) {
          for (int j = 0; j < nv; ++j) {
            at_output(i, j);
            SelectVectorMask(j, nv);
            b.CreateStore(access_.Load(out_access_, idx, ndim, VectorWidth(j, nv, width)),
                          acc[i * nv + j]);
          }
        }
      });
      access_.HoistChecks(false);
    }
    // A full block of a packed panel reads B from the scratch (see PackPanel).
    const bool from_pack = packed_ != nullptr && nv == nrv_ && width == ec_.lanes &&
                           lane_count_ == nullptr && last_vector_mask_ == nullptr;
    llvm::Value* pack_rows = nullptr;
    llvm::Value* pack_rows_at = nullptr;  // its element index in the packed B or the scratch
    if (from_pack && prepacked_) {
      // ir::PackedB: column block n0 / block, all K rows.
      const int64_t block = int64_t{nrv_} * width;
      llvm::Value* j = b.CreateSDiv(n0, ec_.I64Const(block));
      pack_rows_at = b.CreateMul(b.CreateMul(j, kdim_), ec_.I64Const(block));
      pack_rows = b.CreateInBoundsGEP(ec_.F32(), packed_, pack_rows_at);
    } else if (from_pack) {
      const int64_t block = int64_t{nrv_} * width;
      llvm::Value* j = b.CreateSDiv(b.CreateSub(n0, col_lo_), ec_.I64Const(block));
      pack_rows_at = b.CreateMul(b.CreateSub(b.CreateMul(j, kc_), k_lo_), ec_.I64Const(block));
      pack_rows = b.CreateInBoundsGEP(ec_.F32(), packed_, pack_rows_at);
    }
    const int pack_slot = prepacked_ ? k_.b_packed : BoundsChecks::kScratch;
    const NextKBlockPrefetch next_k_block = PlanNextKBlockPrefetch(pack_rows, rows, nv, width);
    if (ShortARows()) PrefetchNextRowBlockA(idx, m0, n0, rows);
    if (k_.config.prefetch_output) PrefetchOutputLines(idx, m, n0, nv, width);
    // The element of B's vector j at K step kk in the packed rows.
    auto packed_at = [&](llvm::Value* kk, int j) {
      return b.CreateAdd(b.CreateMul(kk, ec_.I64Const(int64_t{nv} * width)),
                         ec_.I64Const(int64_t{j} * width));
    };
    CheckKSteps(k_lo_, k_hi_, [&](llvm::Value* kk) {
      std::vector<llvm::Value*> at = idx;
      at[kdim] = kk;
      at[mdim] = nullptr;  // B's M stride is 0
      for (int j : Ends(nv)) {
        if (from_pack) {
          ec_.Check(pack_slot, b.CreateAdd(pack_rows_at, packed_at(kk, j)), nullptr, width, nullptr,
                    /*store=*/false);
        } else {
          at[ndim] = n[j];
          SelectVectorMask(j, nv);
          access_.CheckLoad(k_.b, at, ndim, VectorWidth(j, nv, width));
        }
      }
      at[ndim] = nullptr;  // A's N stride is 0
      for (int i : Ends(rows)) {
        if (slab_m0_ != nullptr) {
          ec_.Check(BoundsChecks::kScratch, SlabIndex(kk, m[i]), nullptr, 1, nullptr,
                    /*store=*/false);
          continue;
        }
        at[mdim] = m[i];
        access_.CheckLoad(k_.a, at, -1, width);
      }
    });
    // The K loop, unrolled config.unroll times.
    access_.HoistChecks(true);
    EmitForLoop(
        ec_, k_lo_, k_hi_,
        [&](llvm::Value* kk) {
          std::vector<llvm::Value*> bv(nv), av(rows), narrow_av(rows);
          idx[kdim] = kk;
          idx[mdim] = nullptr;  // B's M stride is 0
          for (int j = 0; j < nv; ++j) {
            if (from_pack) {
              llvm::Value* at = packed_at(kk, j);
              bv[j] = b.CreateAlignedLoad(vt, b.CreateInBoundsGEP(ec_.F32(), pack_rows, at),
                                          llvm::Align(width * 4));
              if (next_k_block.next != nullptr) {
                if (j == 0) PrefetchNextKBlock(next_k_block, kk);
                if (next_k_block.also_ahead) PrefetchPackedB(pack_rows, at, j, width);
              } else if (prepacked_) {
                PrefetchPackedB(pack_rows, at, j, width);
              }
              continue;
            }
            idx[ndim] = n[j];
            SelectVectorMask(j, nv);
            bv[j] = access_.Load(k_.b, idx, ndim, VectorWidth(j, nv, width));
          }
          idx[ndim] = nullptr;  // A's N stride is 0
          llvm::Value* slab_at = slab_m0_ != nullptr ? SlabIndex(kk, m0) : nullptr;
          for (int i = 0; i < rows; ++i) {
            if (slab_at != nullptr) {
              llvm::Value* at = b.CreateAdd(slab_at, ec_.I64Const(int64_t{i} * slab_.row_stride));
              llvm::Value* a = b.CreateAlignedLoad(
                  ec_.F32(), b.CreateInBoundsGEP(ec_.F32(), ec_.fn->getArg(3), at), llvm::Align(4));
              av[i] = width > 1 ? b.CreateVectorSplat(width, a) : a;
              if (narrow_last_) narrow_av[i] = b.CreateVectorSplat(width / 2, a);
              continue;
            }
            idx[mdim] = m[i];
            av[i] = access_.Load(k_.a, idx, -1, width);
            // The narrow vector's broadcast as a load of its own, which LLVM merges into the
            // wide one's register (its low half); a shuffle of the wide splat made LLVM
            // broadcast narrow and widen with a register shuffle per row instead.
            if (narrow_last_) narrow_av[i] = access_.Load(k_.a, idx, -1, width / 2);
          }
          if (slab_at == nullptr && a_across_k_) PrefetchNextALine(idx, m[0]);
          for (int i = 0; i < rows; ++i) {
            for (int j = 0; j < nv; ++j) {
              llvm::AllocaInst* a = acc[i * nv + j];
              llvm::Value* ai = narrow_last_ && j == nv - 1 ? narrow_av[i] : av[i];
              b.CreateStore(EmitFMulAdd(b, ai, bv[j], b.CreateLoad(vts[j], a)), a);
            }
          }
        },
        ec_.UnrollMetadata(lean_ ? 1 : unroll_));
    // Still hoisted: the tile's results were checked above (CheckTile).
    Finish([&](bool epilogue) {
      if (epilogue && heavy_epilogue_) {
        // One call for the micro-tile: its sums through a stack array.
        llvm::Value* sums = EntryArray(vt, rows * nv);
        for (int a = 0; a < rows * nv; ++a) {
          b.CreateAlignedStore(b.CreateLoad(vt, acc[a]), b.CreateConstInBoundsGEP1_64(vt, sums, a),
                               llvm::Align(4));
        }
        at_output(0, 0);
        CallEpilogue(idx, rows, nv, width, sums);
        return;
      }
      for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < nv; ++j) {
          at_output(i, j);
          SelectVectorMask(j, nv);
          StoreResult(idx, VectorWidth(j, nv, width), b.CreateLoad(vts[j], acc[i * nv + j]),
                      epilogue);
        }
      }
    });
    access_.HoistChecks(false);
  }

  // With config.prefetch_b, a tile of several row blocks over a prepacked B prefetches the
  // panel of the next K block (the next column block's first one after the last) into the
  // L2 while it computes on the current one, each row block a 1/rows share: the memory
  // stream runs under every row block's FMAs instead of stalling the first. A tile of one row
  // block has nothing to spread over and prefetches prefetch_b bytes ahead (PrefetchPackedB);
  // one of at most kAheadToo row blocks does both, its first row block being a large share
  // of its work (measurements: docs/default_configs.md).
  struct NextKBlockPrefetch {
    llvm::Value* next = nullptr;   // the next K block's panel; null: not this way
    llvm::Value* start = nullptr;  // this row block's share's first element in it
    llvm::Value* step = nullptr;   // elements of the share per K step, times 2^16
    int lines = 0;                 // prefetches per K step
    bool also_ahead = false;       // prefetch_b bytes ahead too (PrefetchPackedB)
  };

  NextKBlockPrefetch PlanNextKBlockPrefetch(llvm::Value* pack_rows, int rows, int nv, int width) {
    NextKBlockPrefetch plan;
    const int64_t row_blocks = (TaskRows() + mr_ - 1) / mr_;
    if (pack_rows == nullptr || !prepacked_ || k_.config.prefetch_b <= 0 ||
        spread_span_ == nullptr || row_blocks < 2) {
      return plan;
    }
    llvm::IRBuilder<>& b = ec_.b;
    const int64_t block = int64_t{nv} * width;
    llvm::Value* rest = b.CreateSub(kdim_, k_hi_);
    llvm::Value* next_k = b.CreateBinaryIntrinsic(
        llvm::Intrinsic::smin, kc_,
        b.CreateSelect(b.CreateICmpSGT(rest, ec_.I64Const(0)), rest, kdim_));
    llvm::Value* next_elems = b.CreateMul(next_k, ec_.I64Const(block));
    llvm::Value* cur_k =
        b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b.CreateSub(k_hi_, k_lo_), ec_.I64Const(1));
    plan.next = b.CreateGEP(ec_.F32(), pack_rows, b.CreateMul(k_hi_, ec_.I64Const(block)));
    plan.start = b.CreateSDiv(b.CreateMul(next_elems, spread_row_), spread_span_);
    plan.step = b.CreateSDiv(b.CreateMul(next_elems, ec_.I64Const(int64_t{rows} << 16)),
                             b.CreateMul(spread_span_, cur_k));
    // Lines per K step that cover the share when the tile has its full tile_rows.
    const int64_t lines = std::max<int64_t>(1, block / kLineFloats);
    plan.lines = static_cast<int>((lines + row_blocks - 1) / row_blocks);
    plan.also_ahead = row_blocks <= kAheadToo;
    return plan;
  }

  // The rows of one of the plan's tasks (the tuning spaces' TaskSpan): tile_rows, at most the
  // grid's rows; tile_rows 0 is all of them (many when symbolic).
  int64_t TaskRows() const {
    const ir::SymExpr rows = ir::KernelGrid(k_)[0];
    const int64_t grain = k_.config.tile_rows;
    if (!rows.IsConstant()) return grain > 0 ? grain : std::numeric_limits<int64_t>::max() / 2;
    return grain > 0 ? std::min(grain, rows.constant()) : rows.constant();
  }

  void PrefetchNextKBlock(const NextKBlockPrefetch& plan, llvm::Value* kk) {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Value* off =
        b.CreateAdd(plan.start, b.CreateAShr(b.CreateMul(b.CreateSub(kk, k_lo_), plan.step), 16));
    for (int i = 0; i < plan.lines; ++i) {
      // A GEP without inbounds: the address may lie past the buffer (prefetches never fault).
      llvm::Value* p =
          b.CreateGEP(ec_.F32(), plan.next, b.CreateAdd(off, ec_.I64Const(kLineFloats * i)));
      EmitPrefetch(b, p, 2);
    }
  }

  // A read across K in place (stored [K, M], no slab): at each K step a micro-tile's A
  // elements share one line and the next step's lie a row of A further on, a stride the
  // hardware prefetchers do not run far enough ahead of. Each K step prefetches the line after
  // the micro-tile's first element into the L2: the line the row blocks after it read at that
  // step, so their walk down K finds its lines there instead of in memory.
  void PrefetchNextALine(std::vector<llvm::Value*> idx, llvm::Value* m0) {
    llvm::IRBuilder<>& b = ec_.b;
    idx[rank_ - 2] = b.CreateAdd(m0, ec_.I64Const(kLineFloats));
    llvm::Value* a = ec_.Buffer(ec_.kernel.accesses[k_.a].buffer);
    // A GEP without inbounds: past the last row block the address may lie past A.
    EmitPrefetch(b, b.CreateGEP(ec_.F32(), a, access_.Index(k_.a, idx)), 2);
  }

  // Whether the micro-tiles prefetch the next row block's A rows (PrefetchNextRowBlockA): the
  // broadcast form over rows of A contiguous along K, K blocks of kShortARowMin to
  // kShortARowMax floats, tasks of more than one row block. A task's first column block reads
  // each row block's A rows from wherever the caller left them, often memory; rows of at most
  // 16 lines read side by side are streams too short for the hardware prefetchers
  // (measurements: docs/default_configs.md).
  bool ShortARows() const {
    if (dot_ || TaskRows() <= mr_ || ConstantValue(access_.Stride(k_.a, rank_)) != 1) {
      return false;
    }
    const int64_t kc = k_.config.kc;
    if ((kc > 0 && kc < kShortARowMin) || (k_.k.IsConstant() && k_.k.constant() < kShortARowMin))
      return false;
    if (kc > 0 && kc <= kShortARowMax) return true;
    return k_.k.IsConstant() && k_.k.constant() <= kShortARowMax;
  }

  // In the first column block of a pass (n0 at col_lo_), before the K loop: one prefetcht0 per
  // line of the next row block's `rows` rows over this K block. Past the last row block they
  // fall on the next tile's rows or past A (prefetches never fault).
  void PrefetchNextRowBlockA(std::vector<llvm::Value*> idx, llvm::Value* m0, llvm::Value* n0,
                             int rows) {
    llvm::IRBuilder<>& b = ec_.b;
    const int mdim = rank_ - 2, ndim = rank_ - 1, kdim = rank_;
    llvm::Value* a = ec_.Buffer(ec_.kernel.accesses[k_.a].buffer);
    EmitIfElse(ec_, b.CreateICmpEQ(n0, col_lo_), [&]() {
      llvm::Value* lines =
          b.CreateSDiv(b.CreateAdd(b.CreateSub(k_hi_, k_lo_), ec_.I64Const(kLineFloats - 1)),
                       ec_.I64Const(kLineFloats));
      EmitForLoop(
          ec_, ec_.I64Const(0), lines,
          [&](llvm::Value* line) {
            idx[ndim] = nullptr;  // A's N stride is 0
            idx[kdim] = b.CreateAdd(k_lo_, b.CreateMul(line, ec_.I64Const(kLineFloats)));
            for (int i = 0; i < rows; ++i) {
              idx[mdim] = b.CreateAdd(m0, ec_.I64Const(rows + i));
              // A GEP without inbounds: the address may lie past the buffer.
              llvm::Value* p = b.CreateGEP(ec_.F32(), a, access_.Index(k_.a, idx));
              EmitPrefetch(b, p, 3);
            }
          },
          /*disable_unroll=*/true);
    });
  }

  // With config.prefetch_output, before the K loop: one write-intent prefetch (prefetchw) per
  // line of the micro-tile's rows in each store's output (contiguous along N), and one read
  // prefetch (prefetcht0) per line of each epilogue operand stored as the output is (varying
  // along M, contiguous along N), so their misses overlap the loop instead of stalling the
  // epilogue after it.
  void PrefetchOutputLines(std::vector<llvm::Value*> idx, const std::vector<llvm::Value*>& m,
                           llvm::Value* n0, int nv, int width) {
    llvm::IRBuilder<>& b = ec_.b;
    const int mdim = rank_ - 2, ndim = rank_ - 1, kdim = rank_;
    const int64_t lines = (int64_t{nv} * width + kLineFloats - 1) / kLineFloats;
    idx[kdim] = nullptr;
    // Each line of the micro-tile's rows in `access`.
    auto prefetch_lines = [&](int access, bool write) {
      llvm::Value* base = ec_.Buffer(ec_.kernel.accesses[access].buffer);
      for (llvm::Value* row : m) {
        idx[mdim] = row;
        for (int64_t l = 0; l < lines; ++l) {
          idx[ndim] = b.CreateAdd(n0, ec_.I64Const(l * kLineFloats));
          // A GEP without inbounds: a masked tail's line may end past the buffer.
          EmitPrefetch(b, b.CreateGEP(ec_.F32(), base, access_.Index(access, idx)), 3, write);
        }
      }
    };
    for (const ir::Store& s : k_.stores) {
      if (ConstantValue(access_.Stride(s.access, ndim)) == 1) prefetch_lines(s.access, true);
    }
    // The epilogue's operands laid out as the output (a residual, a saved derivative): read
    // at the same rows and columns after the loop, they miss as the output does.
    for (int a : access_.StreamedLoads(k_.output, ndim)) {
      if (ConstantValue(access_.Stride(a, mdim)) != 0) prefetch_lines(a, false);
    }
  }

  // config.prefetch_b bytes ahead of the prepacked B's vector j of width `width` at element
  // `at` of its block: one prefetcht0 per 64-byte line the loads cover.
  void PrefetchPackedB(llvm::Value* block, llvm::Value* at, int j, int width) {
    const int64_t ahead = k_.config.prefetch_b / 4;
    if (ahead <= 0 || (int64_t{j} * width) % kLineFloats != 0) return;
    llvm::IRBuilder<>& b = ec_.b;
    // A GEP without inbounds: the address may lie past the buffer (prefetches never fault).
    llvm::Value* p = b.CreateGEP(ec_.F32(), block, b.CreateAdd(at, ec_.I64Const(ahead)));
    EmitPrefetch(b, p, 3);
  }

  // The slab's element for row m (of the run packed from row slab_m0_) at K step kk.
  llvm::Value* SlabIndex(llvm::Value* kk, llvm::Value* m) {
    llvm::IRBuilder<>& b = ec_.b;
    return b.CreateAdd(
        b.CreateAdd(ec_.I64Const(slab_.offset),
                    b.CreateMul(b.CreateSub(m, slab_m0_), ec_.I64Const(slab_.row_stride))),
        b.CreateSub(kk, k_lo_));
  }

  // An array of `n` values of `type` in the entry block.
  llvm::Value* EntryArray(llvm::Type* type, int n) {
    llvm::IRBuilder<> entry(&ec_.fn->getEntryBlock(), ec_.fn->getEntryBlock().begin());
    return entry.CreateAlloca(type, entry.getInt32(n), "tilesums");
  }

  // Dot-product form: columns in blocks of nrv_ columns, then single columns.
  void DotRowBlock(const std::vector<llvm::Value*>& idx, int rows) {
    llvm::AllocaInst* col = ec_.EntryAlloca(ec_.I64(), "col");
    ec_.b.CreateStore(col_lo_, col);
    if (rows == 1 && kSingleRowColumns > nrv_ && !lean_) {
      // One row: more columns (independent dot products) in flight.
      EmitChunkLoop(
          ec_, col, col_hi_, kSingleRowColumns,
          [&](llvm::Value* n) { DotKernel(idx, n, 1, kSingleRowColumns); }, false);
    }
    if (nrv_ > 1 && !lean_) {
      EmitChunkLoop(
          ec_, col, col_hi_, nrv_, [&](llvm::Value* n) { DotKernel(idx, n, rows, nrv_); }, false);
    }
    EmitChunkLoop(
        ec_, col, col_hi_, 1, [&](llvm::Value* n) { DotKernel(idx, n, rows, 1); }, true);
  }

  // rows x cols outputs starting at (idx[M], n0): one vector accumulator per output along K.
  void DotKernel(std::vector<llvm::Value*> idx, llvm::Value* n0, int rows, int cols) {
    llvm::IRBuilder<>& b = ec_.b;
    const int lanes = ec_.lanes;
    llvm::Type* vt = ec_.VecType(lanes);
    const int mdim = rank_ - 2, ndim = rank_ - 1, kdim = rank_;
    llvm::Value* m0 = idx[mdim];
    std::vector<llvm::Value*> m(rows), n(cols);
    for (int i = 0; i < rows; ++i) m[i] = b.CreateAdd(m0, ec_.I64Const(i));
    for (int j = 0; j < cols; ++j) n[j] = b.CreateAdd(n0, ec_.I64Const(j));
    // Accumulates acc[i][j] += A[m_i, k..k+width) . B[k..k+width), n_j) elementwise.
    auto step = [&](const std::vector<llvm::AllocaInst*>& acc, llvm::Value* kk, int width) {
      llvm::Type* t = ec_.VecType(width);
      std::vector<llvm::Value*> bv(cols);
      idx[kdim] = kk;
      idx[mdim] = nullptr;  // B's M stride is 0
      for (int j = 0; j < cols; ++j) {
        idx[ndim] = n[j];
        bv[j] = access_.Load(k_.b, idx, kdim, width);
      }
      idx[ndim] = nullptr;  // A's N stride is 0
      for (int i = 0; i < rows; ++i) {
        idx[mdim] = m[i];
        llvm::Value* av = access_.Load(k_.a, idx, kdim, width);
        for (int j = 0; j < cols; ++j) {
          llvm::AllocaInst* a = acc[i * cols + j];
          b.CreateStore(EmitFMulAdd(b, av, bv[j], b.CreateLoad(t, a)), a);
        }
      }
    };
    std::vector<llvm::AllocaInst*> acc(rows * cols);
    for (auto& a : acc) {
      a = ec_.EntryAlloca(vt, "dotacc");
      b.CreateStore(llvm::ConstantFP::get(vt, 0.0), a);
    }
    llvm::AllocaInst* pos = ec_.EntryAlloca(ec_.I64(), "kpos");
    b.CreateStore(k_lo_, pos);
    // The vector steps and the scalar K tail read K from k_lo_ to k_hi_ - 1, no further.
    CheckKSteps(k_lo_, k_hi_, [&](llvm::Value* kk) {
      std::vector<llvm::Value*> at = idx;
      at[kdim] = kk;
      at[mdim] = nullptr;  // B's M stride is 0
      for (int j : Ends(cols)) {
        at[ndim] = n[j];
        access_.CheckLoad(k_.b, at, kdim, 1);
      }
      at[ndim] = nullptr;  // A's N stride is 0
      for (int i : Ends(rows)) {
        at[mdim] = m[i];
        access_.CheckLoad(k_.a, at, kdim, 1);
      }
    });
    access_.HoistChecks(true);
    EmitChunkLoop(
        ec_, pos, k_hi_, lanes, [&](llvm::Value* kk) { step(acc, kk, lanes); }, false);
    if (lanes > 1) {
      // Reduce first, then the K tail continues the scalar sums (fewer live registers).
      for (auto& a : acc) {
        llvm::Value* sum = CombineLanes(b, Combine::kSum, b.CreateLoad(vt, a));
        a = ec_.EntryAlloca(ec_.F32(), "dotsum");
        b.CreateStore(sum, a);
      }
      EmitChunkLoop(
          ec_, pos, k_hi_, 1, [&](llvm::Value* kk) { step(acc, kk, 1); }, true);
    }
    idx[kdim] = nullptr;
    idx[ndim] = n0;
    access_.HoistChecks(false);
    CheckTile(idx, m, n0, 1, cols);
    access_.HoistChecks(true);  // the tile's results were checked (CheckTile)
    llvm::Type* ot = ec_.VecType(cols);
    std::vector<llvm::AllocaInst*> dots(rows);
    for (int i = 0; i < rows; ++i) {
      llvm::Value* row = cols == 1 ? nullptr : llvm::PoisonValue::get(ot);
      for (int j = 0; j < cols; ++j) {
        llvm::Value* d = b.CreateLoad(ec_.F32(), acc[i * cols + j]);
        row = cols == 1 ? d : b.CreateInsertElement(row, d, static_cast<uint64_t>(j));
      }
      dots[i] = ec_.EntryAlloca(ot, "dotrow");
      b.CreateStore(row, dots[i]);
    }
    if (kblock_) {
      EmitIfElse(ec_, b.CreateNot(first_), [&]() {
        for (int i = 0; i < rows; ++i) {
          idx[mdim] = m[i];
          llvm::Value* partial = access_.Load(out_access_, idx, ndim, cols);
          b.CreateStore(b.CreateFAdd(b.CreateLoad(ot, dots[i]), partial), dots[i]);
        }
      });
    }
    Finish([&](bool epilogue) {
      for (int i = 0; i < rows; ++i) {
        idx[mdim] = m[i];
        StoreResult(idx, cols, b.CreateLoad(ot, dots[i]), epilogue);
      }
    });
    access_.HoistChecks(false);
  }

  // The transpose of a square of vectors (v.size() == lanes, a power of two): log2(lanes)
  // rounds of interleaving vector i with vector i + lanes/2.
  std::vector<llvm::Value*> Transpose(std::vector<llvm::Value*> v) {
    const int n = static_cast<int>(v.size());
    std::vector<int> lo_mask, hi_mask;
    for (int t = 0; t < n / 2; ++t) {
      lo_mask.insert(lo_mask.end(), {t, n + t});
      hi_mask.insert(hi_mask.end(), {n / 2 + t, n + n / 2 + t});
    }
    for (int round = 1; round < n; round *= 2) {
      std::vector<llvm::Value*> next(n);
      for (int i = 0; i < n / 2; ++i) {
        next[2 * i] = ec_.b.CreateShuffleVector(v[i], v[i + n / 2], lo_mask);
        next[2 * i + 1] = ec_.b.CreateShuffleVector(v[i], v[i + n / 2], hi_mask);
      }
      v = std::move(next);
    }
    return v;
  }

  // The epilogue and the stores of `width` results at idx; or, before the last K block, the
  // partial sums into the output.
  void StoreResult(const std::vector<llvm::Value*>& idx, int width, llvm::Value* sums,
                   bool epilogue) {
    if (!epilogue) {
      access_.Store(out_access_, idx, rank_ - 1, width, sums);
      return;
    }
    if (!heavy_epilogue_) {
      EmitEpilogue(ec_.b, access_, idx, width, sums);
      return;
    }
    llvm::Value* one = EntryArray(ec_.VecType(width), 1);
    ec_.b.CreateAlignedStore(sums, one, llvm::Align(4));
    CallEpilogue(idx, 1, 1, width, one);
  }

  // Calls EpilogueFunction(width) on `rows` x `nv` vectors of sums (row-major at `sums`) whose
  // first output is at idx.
  void CallEpilogue(const std::vector<llvm::Value*>& idx, int rows, int nv, int width,
                    llvm::Value* sums) {
    std::vector<llvm::Value*> call_args = {ec_.fn->getArg(0)};
    for (int d = 0; d < rank_; ++d) call_args.push_back(idx[d] ? idx[d] : ec_.I64Const(0));
    call_args.push_back(sums);
    call_args.push_back(ec_.I64Const(rows));
    call_args.push_back(ec_.I64Const(nv));
    if (lane_count_ != nullptr) call_args.push_back(lane_count_);
    ec_.b.CreateCall(EpilogueFunction(width, lane_count_ != nullptr), call_args);
  }

  // The epilogue program on `sums` at idx, and the stores.
  void EmitEpilogue(llvm::IRBuilderBase& b, AccessEmitter& access,
                    const std::vector<llvm::Value*>& idx, int width, llvm::Value* sums) {
    const int ndim = rank_ - 1;
    auto load = [&](int a) { return access.Load(a, idx, ndim, width); };
    auto index = [&](int dim) { return DomainIndex(b, idx, ndim, width, dim); };
    auto gather = [&](int a, llvm::Value* i) { return access.Gather(a, idx, ndim, width, i); };
    std::vector<llvm::Value*> v =
        EmitProgram(b, k_.output, roots_, ec_.VecType(width), load, sums, index, gather);
    for (const ir::Store& st : k_.stores) access.Store(st.access, idx, ndim, width, v[st.value]);
  }

  // void <kernel>.epilogue<width>(args, idx[0], ..., idx[rank-1], sums*, rows, nv): the
  // epilogue (EmitEpilogue) of rows x nv vectors of `width` whose first output is at idx, their
  // sums row-major at `sums`. The masked variant (.epilogue<width>m) takes one more argument,
  // the lanes of each vector that are columns (see Masked). An epilogue beyond the plain store is
  // emitted once per width, as a function the micro-tiles call, instead of once per accumulator of
  // every micro-tile variant (much of the kernel's compile time), and called once per micro-tile,
  // not per vector: the call's set-up (the kernel arguments, the accesses' strides) is paid once
  // for the tile (a bias epilogue per vector cost 1.2 ms of a 9 ms 512x768x3072 linear).
  llvm::Function* EpilogueFunction(int width, bool masked) {
    llvm::Function*& f = epilogue_fns_[{width, masked}];
    if (f != nullptr) return f;
    std::vector<llvm::Type*> params = {ec_.b.getPtrTy()};
    for (int d = 0; d < rank_; ++d) params.push_back(ec_.I64());
    params.push_back(ec_.b.getPtrTy());
    params.push_back(ec_.I64());
    params.push_back(ec_.I64());
    if (masked) params.push_back(ec_.I64());
    auto* type = llvm::FunctionType::get(ec_.b.getVoidTy(), params, false);
    f = llvm::Function::Create(
        type, llvm::Function::InternalLinkage,
        ec_.fn->getName() + ".epilogue" + llvm::Twine(width) + (masked ? "m" : ""), ec_.module);
    SetCodegenAttributes(ec_.target, ec_.lanes, *f);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::NoInline);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ec_.ctx, "entry", f));
    EmitContext ec(k_, ec_.target, ec_.options, ec_.lanes, ec_.module, f, b);
    ec.LoadEntry(f->getArg(0));
    AccessEmitter access(ec);
    if (masked) access.MaskLanes(ec.LaneMask(f->getArg(4 + rank_), width));
    const int mdim = rank_ - 2, ndim = rank_ - 1;
    llvm::Type* vt = ec_.VecType(width);
    llvm::Value* sums = f->getArg(1 + rank_);
    llvm::Value* nv = f->getArg(3 + rank_);
    // Loops, not unrolled: few copies of the epilogue program (compile time). A row of a full
    // micro-tile (nv = nr_vectors) is one wide vector of nv x width lanes, its sums contiguous
    // at `sums`: instruction selection splits it into native vectors op by op, so their
    // dependency chains (a transcendental's tens of instructions) interleave, as in the fused
    // body of elementwise kernels, instead of running one vector after another.
    const auto row_epilogue = [&](llvm::Value* i) {
      std::vector<llvm::Value*> idx(rank_ + 1, nullptr);
      for (int d = 0; d < rank_; ++d) idx[d] = f->getArg(1 + d);
      idx[mdim] = b.CreateAdd(idx[mdim], i);
      llvm::Value* n0 = idx[ndim];
      const auto vectors = [&] {
        EmitForLoop(
            ec, b.getInt64(0), nv,
            [&](llvm::Value* j) {
              idx[ndim] = b.CreateAdd(n0, b.CreateMul(j, b.getInt64(width)));
              llvm::Value* at = b.CreateInBoundsGEP(vt, sums, b.CreateAdd(b.CreateMul(i, nv), j));
              EmitEpilogue(b, access, idx, width, b.CreateAlignedLoad(vt, at, llvm::Align(4)));
            },
            /*disable_unroll=*/true);
      };
      if (masked || nrv_ < 2) {
        vectors();
        return;
      }
      EmitIfElse(
          ec, b.CreateICmpEQ(nv, b.getInt64(nrv_)),
          [&] {
            llvm::Value* at = b.CreateInBoundsGEP(vt, sums, b.CreateMul(i, nv));
            idx[ndim] = n0;
            EmitEpilogue(b, access, idx, width * nrv_,
                         b.CreateAlignedLoad(ec_.VecType(width * nrv_), at, llvm::Align(4)));
          },
          vectors);
    };
    EmitForLoop(ec, b.getInt64(0), f->getArg(2 + rank_), row_epilogue, /*disable_unroll=*/true);
    b.CreateRetVoid();
    return f;
  }

  // store(true) after the last K block (always, without K blocking), else store(false).
  void Finish(const std::function<void(bool epilogue)>& store) {
    if (!kblock_) {
      store(true);
      return;
    }
    EmitIfElse(
        ec_, last_, [&]() { store(true); }, [&]() { store(false); });
  }

  EmitContext& ec_;
  AccessEmitter& access_;
  const ir::Kernel& k_;
  const int rank_;
  int mr_ = 1, nrv_ = 1;
  bool dot_ = false;         // dot-product form (see the file comment)
  bool a_across_k_ = false;  // A stored [K, M]: contiguous along M (PrefetchNextALine)
  std::vector<llvm::Value*> dims_;
  std::vector<int> roots_;
  llvm::Value* kdim_ = nullptr;
  llvm::Value* col_lo_ = nullptr;  // the column panel being emitted
  llvm::Value* col_hi_ = nullptr;
  bool pack_ = false;                  // packing B is possible for this kernel (see the ctor)
  bool batched_b_ = false;             // B moves along a batch dim
  std::vector<llvm::Value*> b_batch_;  // while packing per batch entry: its index per batch dim
  llvm::Value* packed_ = nullptr;      // while emitting the packed rows: the packed panel
  bool prepacked_ = false;             // ... and it is the plan's prepacked B (ir::PackedB)
  bool heavy_epilogue_ = false;        // emitted as a function (see StoreResult)
  std::map<std::pair<int, bool>, llvm::Function*> epilogue_fns_;  // by width, masked
  llvm::Value* lane_count_ = nullptr;  // while emitting a masked tile: its lanes (see Masked)
  // While emitting a micro-tile whose last vector alone is masked: its lane mask (see
  // SelectVectorMask).
  llvm::Value* last_vector_mask_ = nullptr;
  bool narrow_last_ = false;  // the masked last vector at half the lanes
  int VectorWidth(int j, int nv, int width) const {
    return narrow_last_ && j == nv - 1 ? width / 2 : width;
  }
  bool kblock_ = false;             // K blocking is possible (see the ctor)
  MatMulASlab slab_;                // A read across K: its copy in the scratch
  bool pack_a_ = false;             // the rows go through the slab (EmitRows)
  llvm::Value* slab_m0_ = nullptr;  // while emitting a packed run: its first row (M index)
  int unroll_ = 1;                  // of the micro-kernel's K loop
  // The fallback for a range the plan never makes (a prepacked B's columns off a block): one
  // row, one vector (or column) per micro-tile, the K loop not unrolled.
  bool lean_ = false;
  // Inside EmitRows: the row block's first row and the rows of the sweep, from its start.
  llvm::Value* spread_row_ = nullptr;
  llvm::Value* spread_span_ = nullptr;
  int out_access_ = -1;        // the single store's access (K blocking's partial sums)
  llvm::Value* kc_ = nullptr;  // the K block in use (K itself without K blocking)
  // The K block being emitted, [k_lo_, k_hi_), and whether it is the first / the last.
  llvm::Value* k_lo_ = nullptr;
  llvm::Value* k_hi_ = nullptr;
  llvm::Value* first_ = nullptr;
  llvm::Value* last_ = nullptr;
};

}  // namespace

absl::Status EmitMatMul(EmitContext& ec, AccessEmitter& access) {
  MatMulEmitter(ec, access).Emit();
  return absl::OkStatus();
}

}  // namespace pto::jit
