// MatMul: domain [batch..., M, N], contraction K. Grid {rows = prod(batch)*M, cols = N}.
// Rows are taken in blocks of config.mr within one batch entry (1-row blocks for the M tail).
// Two micro-kernel forms, chosen from b's constant strides:
//  - broadcast form (the default): columns in blocks of config.nr_vectors vectors (then single
//    vectors, then scalars); mr x nr vector accumulators over the K loop: A elements are
//    broadcast, B rows are vector loads along N, and llvm.fmuladd gives vector FMAs.
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
// The epilogue program runs on the accumulators before the stores.
#include <functional>
#include <vector>

#include "jit/codegen/emit_expr.h"
#include "jit/codegen/emit_kinds.h"
#include "jit/codegen/emit_loops.h"
#include "jit/codegen/reduction_ops.h"
#include "jit/codegen/vector_math.h"

namespace pto::jit {
namespace {

// A tile packs B only when it has at least this many row blocks to reuse the panel.
constexpr int64_t kPackMinRowBlocks = 2;
// Micro-tiles of a single row (M = 1, matrix-vector; and the M tail): vectors of columns in
// the broadcast form, columns in the dot-product form. Independent accumulators hide the FMA
// latency that a 1 x 2 tile exposes.
constexpr int kSingleRowVectors = 8;
constexpr int kSingleRowColumns = 8;
// K block of a one-row tile's row-by-row sweep of B (see SingleRowKBlocked).
constexpr int64_t kSingleRowKBlock = 256;

class MatMulEmitter {
 public:
  MatMulEmitter(EmitContext& ec, AccessEmitter& access)
      : ec_(ec), access_(access), k_(ec.kernel), rank_(static_cast<int>(k_.domain.size())) {
    for (const ir::SymExpr& d : k_.domain) dims_.push_back(ec.Sym(d));
    for (const ir::Store& s : k_.stores) roots_.push_back(s.value);
    kdim_ = ec.Sym(k_.k);
    mr_ = std::max(1, k_.config.mr);
    nrv_ = std::max(1, k_.config.nr_vectors);
    const int ndim = rank_ - 1, kdim = rank_;
    dot_ = ConstantValue(access_.Stride(k_.b, ndim)) != 1 &&
           ConstantValue(access_.Stride(k_.b, kdim)) == 1;
    // Packing copies one panel of B per tile, so B must be the same for every row of the
    // tile: no batch dims along which B moves.
    // In the dot-product form the packed panel is B transposed, and the packed rows use the
    // broadcast micro-kernel.
    pack_ = k_.config.pack_b && k_.config.panel_bytes > 0 && ec.lanes > 1;
    for (int d = 0; d + 2 < rank_; ++d) {
      if (ConstantValue(access_.Stride(k_.b, d)) != 0) pack_ = false;
    }
  }

  void Emit() {
    llvm::IRBuilder<>& b = ec_.b;
    if (pack_ && !dot_) {
      // A tile of one row (M = 1: matrix-vector) sweeps B row by row in K blocks, its partial
      // sums in the scratch, instead of walking down B's columns (a new page every row).
      llvm::Value* scratch = ec_.fn->getArg(3);
      llvm::Value* one_row = b.CreateICmpEQ(b.CreateSub(ec_.hi[0], ec_.lo[0]), ec_.I64Const(1));
      llvm::Value* fits =
          b.CreateICmpSLE(b.CreateMul(b.CreateSub(ec_.hi[1], ec_.lo[1]), ec_.I64Const(4)),
                          ec_.I64Const(k_.config.panel_bytes));
      llvm::Value* go = b.CreateAnd(b.CreateAnd(one_row, fits), b.CreateIsNotNull(scratch));
      llvm::BasicBlock* row = llvm::BasicBlock::Create(ec_.ctx, "mv", ec_.fn);
      llvm::BasicBlock* tiles = llvm::BasicBlock::Create(ec_.ctx, "mv.not", ec_.fn);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(ec_.ctx, "mv.done", ec_.fn);
      b.CreateCondBr(go, row, tiles);
      b.SetInsertPoint(row);
      SingleRowKBlocked(scratch);
      b.CreateBr(done);
      b.SetInsertPoint(tiles);
      EmitTiles();
      b.CreateBr(done);
      b.SetInsertPoint(done);
      return;
    }
    EmitTiles();
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
      if (lanes > 1) {
        EmitChunkLoop(
            ec_, col, ec_.hi[1], 1, [&](llvm::Value* n) { body(n, 1, 1); }, true);
      }
    };
    auto partial_at = [&](llvm::Value* n) {
      return b.CreateInBoundsGEP(ec_.F32(), partial, b.CreateSub(n, ec_.lo[1]));
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
              llvm::Value* at = partial_at(b.CreateAdd(n0, ec_.I64Const(int64_t{j} * width)));
              b.CreateStore(b.CreateAlignedLoad(vt, at, llvm::Align(4)), acc[j]);
            }
            EmitForLoop(ec_, k_lo, k_hi, [&](llvm::Value* kk) {
              std::vector<llvm::Value*> at = idx;
              at[kdim] = kk;
              at[ndim] = nullptr;  // A's N stride is 0
              llvm::Value* a = access_.Load(k_.a, at, -1, width);
              at[mdim] = nullptr;  // B's M stride is 0
              for (int j = 0; j < nv; ++j) {
                at[ndim] = b.CreateAdd(n0, ec_.I64Const(int64_t{j} * width));
                llvm::Value* bv = access_.Load(k_.b, at, ndim, width);
                b.CreateStore(EmitFMulAdd(b, a, bv, b.CreateLoad(vt, acc[j])), acc[j]);
              }
            });
            for (int j = 0; j < nv; ++j) {
              llvm::Value* at = partial_at(b.CreateAdd(n0, ec_.I64Const(int64_t{j} * width)));
              b.CreateAlignedStore(b.CreateLoad(vt, acc[j]), at, llvm::Align(4));
            }
          });
        },
        /*disable_unroll=*/true);
    // The epilogue on the sums, and the stores.
    chunks([&](llvm::Value* n0, int nv, int width) {
      llvm::Type* vt = ec_.VecType(width);
      for (int j = 0; j < nv; ++j) {
        std::vector<llvm::Value*> at = idx;
        at[ndim] = b.CreateAdd(n0, ec_.I64Const(int64_t{j} * width));
        llvm::Value* sum = b.CreateAlignedLoad(vt, partial_at(at[ndim]), llvm::Align(4));
        auto load = [&](int a) { return access_.Load(a, at, ndim, width); };
        std::vector<llvm::Value*> v = EmitProgram(b, k_.output, roots_, vt, load, sum);
        for (const ir::Store& st : k_.stores)
          access_.Store(st.access, at, ndim, width, v[st.value]);
      }
    });
  }

  // The tile range in column panels (see the file comment), rows within each panel.
  void EmitTiles() {
    llvm::IRBuilder<>& b = ec_.b;
    if (k_.config.panel_bytes <= 0) {
      col_lo_ = ec_.lo[1];
      col_hi_ = ec_.hi[1];
      EmitRows();
      return;
    }
    // Column panels: panel = max(block, panel_bytes / (4 K)) rounded down to whole blocks.
    const int64_t block = dot_ && !pack_ ? nrv_ : int64_t{nrv_} * ec_.lanes;
    llvm::Value* k4 = b.CreateMul(
        b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, kdim_, ec_.I64Const(1)), ec_.I64Const(4));
    llvm::Value* fit = b.CreateSDiv(ec_.I64Const(k_.config.panel_bytes), k4);
    fit = b.CreateMul(b.CreateSDiv(fit, ec_.I64Const(block)), ec_.I64Const(block));
    llvm::Value* panel = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, fit, ec_.I64Const(block));
    llvm::Value* span = b.CreateSub(ec_.hi[1], ec_.lo[1]);
    llvm::Value* panels =
        b.CreateSDiv(b.CreateAdd(span, b.CreateSub(panel, ec_.I64Const(1))), panel);
    // Packing pays off when the panel fits the scratch and the tile has rows enough to reuse it.
    llvm::Value* scratch = ec_.fn->getArg(3);
    llvm::Value* pack = nullptr;
    if (pack_) {
      pack = b.CreateAnd(b.CreateIsNotNull(scratch), b.CreateICmpSGE(fit, ec_.I64Const(block)));
      pack = b.CreateAnd(pack, b.CreateICmpSGE(b.CreateSub(ec_.hi[0], ec_.lo[0]),
                                               ec_.I64Const(kPackMinRowBlocks * mr_)));
    }
    EmitForLoop(
        ec_, ec_.I64Const(0), panels,
        [&](llvm::Value* p) {
          col_lo_ = b.CreateAdd(ec_.lo[1], b.CreateMul(p, panel));
          col_hi_ = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateAdd(col_lo_, panel),
                                            ec_.hi[1]);
          if (pack == nullptr) {
            EmitRows();
            return;
          }
          llvm::BasicBlock* packed = llvm::BasicBlock::Create(ec_.ctx, "panel.packed", ec_.fn);
          llvm::BasicBlock* direct = llvm::BasicBlock::Create(ec_.ctx, "panel.direct", ec_.fn);
          llvm::BasicBlock* done = llvm::BasicBlock::Create(ec_.ctx, "panel.done", ec_.fn);
          b.CreateCondBr(pack, packed, direct);
          b.SetInsertPoint(packed);
          PackPanel(scratch);
          packed_ = scratch;
          const bool dot = dot_;
          dot_ = false;  // packed rows always use the broadcast micro-kernel
          EmitRows();
          dot_ = dot;
          packed_ = nullptr;
          b.CreateBr(done);
          b.SetInsertPoint(direct);
          EmitRows();
          b.CreateBr(done);
          b.SetInsertPoint(done);
        },
        /*disable_unroll=*/true);
  }

  // Copies the panel's full column blocks of B into `dst`: block j's rows k are
  // dst[(j * K + k) * block + 0 .. block), so the micro-kernel reads B contiguously.
  void PackPanel(llvm::Value* dst) {
    llvm::IRBuilder<>& b = ec_.b;
    const int lanes = ec_.lanes;
    const int64_t block = int64_t{nrv_} * lanes;
    const int ndim = rank_ - 1, kdim = rank_;
    llvm::Value* blocks = b.CreateSDiv(b.CreateSub(col_hi_, col_lo_), ec_.I64Const(block));
    if (dot_) {
      // B stored [N, K]: column n's K values are contiguous; each lands in its lane.
      EmitForLoop(ec_, ec_.I64Const(0), blocks, [&](llvm::Value* j) {
        llvm::Value* n0 = b.CreateAdd(col_lo_, b.CreateMul(j, ec_.I64Const(block)));
        llvm::Value* row0 = b.CreateMul(j, kdim_);
        EmitForLoop(ec_, ec_.I64Const(0), ec_.I64Const(block), [&](llvm::Value* c) {
          EmitForLoop(ec_, ec_.I64Const(0), kdim_, [&](llvm::Value* kk) {
            std::vector<llvm::Value*> idx(rank_ + 1, nullptr);
            idx[kdim] = kk;
            idx[ndim] = b.CreateAdd(n0, c);
            llvm::Value* value = access_.Load(k_.b, idx, -1, 1);
            llvm::Value* at =
                b.CreateAdd(b.CreateMul(b.CreateAdd(row0, kk), ec_.I64Const(block)), c);
            b.CreateAlignedStore(value, b.CreateInBoundsGEP(ec_.F32(), dst, at), llvm::Align(4));
          });
        });
      });
      return;
    }
    EmitForLoop(ec_, ec_.I64Const(0), blocks, [&](llvm::Value* j) {
      llvm::Value* n0 = b.CreateAdd(col_lo_, b.CreateMul(j, ec_.I64Const(block)));
      llvm::Value* row0 = b.CreateMul(j, kdim_);
      EmitForLoop(ec_, ec_.I64Const(0), kdim_, [&](llvm::Value* kk) {
        std::vector<llvm::Value*> idx(rank_ + 1, nullptr);  // B's batch and M strides are 0
        idx[kdim] = kk;
        llvm::Value* at = b.CreateMul(b.CreateAdd(row0, kk), ec_.I64Const(block));
        for (int v = 0; v < nrv_; ++v) {
          idx[ndim] = b.CreateAdd(n0, ec_.I64Const(int64_t{v} * lanes));
          llvm::Value* value = access_.Load(k_.b, idx, ndim, lanes);
          llvm::Value* ptr = b.CreateInBoundsGEP(ec_.F32(), dst,
                                                 b.CreateAdd(at, ec_.I64Const(int64_t{v} * lanes)));
          b.CreateAlignedStore(value, ptr, llvm::Align(lanes * 4));
        }
      });
    });
  }

  // Every row of the tile range, over the columns [col_lo_, col_hi_).
  void EmitRows() {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Value* m_extent = dims_[rank_ - 2];
    std::vector<llvm::Value*> batch_dims(dims_.begin(), dims_.end() - 2);
    llvm::AllocaInst* pos = ec_.EntryAlloca(ec_.I64(), "row");
    b.CreateStore(ec_.lo[0], pos);
    llvm::BasicBlock* header = llvm::BasicBlock::Create(ec_.ctx, "rows", ec_.fn);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(ec_.ctx, "rows.body", ec_.fn);
    llvm::BasicBlock* full = llvm::BasicBlock::Create(ec_.ctx, "rows.full", ec_.fn);
    llvm::BasicBlock* single = llvm::BasicBlock::Create(ec_.ctx, "rows.single", ec_.fn);
    llvm::BasicBlock* latch = llvm::BasicBlock::Create(ec_.ctx, "rows.latch", ec_.fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ec_.ctx, "rows.exit", ec_.fn);
    b.CreateBr(header);
    b.SetInsertPoint(header);
    llvm::Value* r = b.CreateLoad(ec_.I64(), pos);
    b.CreateCondBr(b.CreateICmpSLT(r, ec_.hi[0]), body, exit);

    b.SetInsertPoint(body);
    llvm::Value* m = b.CreateURem(r, m_extent);
    std::vector<llvm::Value*> idx = ec_.Unflatten(b.CreateUDiv(r, m_extent), batch_dims);
    idx.resize(rank_ + 1, nullptr);
    idx[rank_ - 2] = m;
    llvm::Value* avail = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateSub(ec_.hi[0], r),
                                                 b.CreateSub(m_extent, m));
    b.CreateCondBr(b.CreateICmpSGE(avail, ec_.I64Const(mr_)), full, single);

    b.SetInsertPoint(full);
    RowBlock(idx, mr_);
    b.CreateStore(b.CreateAdd(r, ec_.I64Const(mr_)), pos);
    b.CreateBr(latch);

    b.SetInsertPoint(single);
    RowBlock(idx, 1);
    b.CreateStore(b.CreateAdd(r, ec_.I64Const(1)), pos);
    b.CreateBr(latch);

    b.SetInsertPoint(latch);
    llvm::BranchInst* back = b.CreateBr(header);
    back->setMetadata(llvm::LLVMContext::MD_loop, ec_.LoopMetadata(true));
    b.SetInsertPoint(exit);
  }

 private:
  // Rows idx[rank-2] .. +rows-1 of one batch entry, all columns of the tile range.
  void RowBlock(const std::vector<llvm::Value*>& idx, int rows) {
    if (dot_) {
      DotRowBlock(idx, rows);
      return;
    }
    const int lanes = ec_.lanes;
    llvm::AllocaInst* col = ec_.EntryAlloca(ec_.I64(), "col");
    ec_.b.CreateStore(col_lo_, col);
    if (rows == 1 && packed_ == nullptr && kSingleRowVectors > nrv_) {
      // One row (M = 1, or the M tail): more accumulators in flight, B streams through once.
      EmitChunkLoop(
          ec_, col, col_hi_, int64_t{kSingleRowVectors} * lanes,
          [&](llvm::Value* n) { MicroKernel(idx, n, 1, kSingleRowVectors, lanes); }, false);
    }
    EmitChunkLoop(
        ec_, col, col_hi_, int64_t{nrv_} * lanes,
        [&](llvm::Value* n) { MicroKernel(idx, n, rows, nrv_, lanes); }, false);
    if (nrv_ > 1) {
      EmitChunkLoop(
          ec_, col, col_hi_, lanes, [&](llvm::Value* n) { MicroKernel(idx, n, rows, 1, lanes); },
          true);
    }
    if (lanes > 1) {
      EmitChunkLoop(
          ec_, col, col_hi_, 1, [&](llvm::Value* n) { MicroKernel(idx, n, rows, 1, 1); }, true);
    }
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
    for (auto& a : acc) {
      a = ec_.EntryAlloca(vt, "mmacc");
      b.CreateStore(llvm::ConstantFP::get(vt, 0.0), a);
    }
    // A full block of a packed panel reads B from the scratch (see PackPanel).
    const bool from_pack = packed_ != nullptr && nv == nrv_ && width == ec_.lanes;
    llvm::Value* pack_rows = nullptr;
    if (from_pack) {
      const int64_t block = int64_t{nrv_} * width;
      llvm::Value* j = b.CreateSDiv(b.CreateSub(n0, col_lo_), ec_.I64Const(block));
      pack_rows = b.CreateInBoundsGEP(ec_.F32(), packed_,
                                      b.CreateMul(b.CreateMul(j, kdim_), ec_.I64Const(block)));
    }
    EmitForLoop(ec_, ec_.I64Const(0), kdim_, [&](llvm::Value* kk) {
      std::vector<llvm::Value*> bv(nv), av(rows);
      idx[kdim] = kk;
      idx[mdim] = nullptr;  // B's M stride is 0
      for (int j = 0; j < nv; ++j) {
        if (from_pack) {
          llvm::Value* at = b.CreateAdd(b.CreateMul(kk, ec_.I64Const(int64_t{nv} * width)),
                                        ec_.I64Const(int64_t{j} * width));
          bv[j] = b.CreateAlignedLoad(vt, b.CreateInBoundsGEP(ec_.F32(), pack_rows, at),
                                      llvm::Align(width * 4));
          continue;
        }
        idx[ndim] = n[j];
        bv[j] = access_.Load(k_.b, idx, ndim, width);
      }
      idx[ndim] = nullptr;  // A's N stride is 0
      for (int i = 0; i < rows; ++i) {
        idx[mdim] = m[i];
        av[i] = access_.Load(k_.a, idx, -1, width);
      }
      for (int i = 0; i < rows; ++i) {
        for (int j = 0; j < nv; ++j) {
          llvm::AllocaInst* a = acc[i * nv + j];
          b.CreateStore(EmitFMulAdd(b, av[i], bv[j], b.CreateLoad(vt, a)), a);
        }
      }
    });
    idx[kdim] = nullptr;
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < nv; ++j) {
        idx[mdim] = m[i];
        idx[ndim] = n[j];
        auto load = [&](int a) { return access_.Load(a, idx, ndim, width); };
        std::vector<llvm::Value*> v =
            EmitProgram(b, k_.output, roots_, vt, load, b.CreateLoad(vt, acc[i * nv + j]));
        for (const ir::Store& s : k_.stores) access_.Store(s.access, idx, ndim, width, v[s.value]);
      }
    }
  }

  // Dot-product form: columns in blocks of nrv_ columns, then single columns.
  void DotRowBlock(const std::vector<llvm::Value*>& idx, int rows) {
    llvm::AllocaInst* col = ec_.EntryAlloca(ec_.I64(), "col");
    ec_.b.CreateStore(col_lo_, col);
    if (rows == 1 && kSingleRowColumns > nrv_) {
      // One row: more columns (independent dot products) in flight.
      EmitChunkLoop(
          ec_, col, col_hi_, kSingleRowColumns,
          [&](llvm::Value* n) { DotKernel(idx, n, 1, kSingleRowColumns); }, false);
    }
    if (nrv_ > 1) {
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
    b.CreateStore(ec_.I64Const(0), pos);
    EmitChunkLoop(
        ec_, pos, kdim_, lanes, [&](llvm::Value* kk) { step(acc, kk, lanes); }, false);
    if (lanes > 1) {
      // Reduce first, then the K tail continues the scalar sums (fewer live registers).
      for (auto& a : acc) {
        llvm::Value* sum = CombineLanes(b, Combine::kSum, b.CreateLoad(vt, a));
        a = ec_.EntryAlloca(ec_.F32(), "dotsum");
        b.CreateStore(sum, a);
      }
      EmitChunkLoop(
          ec_, pos, kdim_, 1, [&](llvm::Value* kk) { step(acc, kk, 1); }, true);
    }
    idx[kdim] = nullptr;
    idx[ndim] = n0;
    llvm::Type* ot = ec_.VecType(cols);
    for (int i = 0; i < rows; ++i) {
      llvm::Value* dots = cols == 1 ? nullptr : llvm::PoisonValue::get(ot);
      for (int j = 0; j < cols; ++j) {
        llvm::Value* d = b.CreateLoad(ec_.F32(), acc[i * cols + j]);
        dots = cols == 1 ? d : b.CreateInsertElement(dots, d, static_cast<uint64_t>(j));
      }
      idx[mdim] = m[i];
      auto load = [&](int a) { return access_.Load(a, idx, ndim, cols); };
      std::vector<llvm::Value*> v = EmitProgram(b, k_.output, roots_, ot, load, dots);
      for (const ir::Store& s : k_.stores) access_.Store(s.access, idx, ndim, cols, v[s.value]);
    }
  }

  EmitContext& ec_;
  AccessEmitter& access_;
  const ir::Kernel& k_;
  const int rank_;
  int mr_ = 1, nrv_ = 1;
  bool dot_ = false;  // dot-product form (see the file comment)
  std::vector<llvm::Value*> dims_;
  std::vector<int> roots_;
  llvm::Value* kdim_ = nullptr;
  llvm::Value* col_lo_ = nullptr;  // the column panel being emitted
  llvm::Value* col_hi_ = nullptr;
  bool pack_ = false;              // packing B is possible for this kernel (see the ctor)
  llvm::Value* packed_ = nullptr;  // while emitting the packed rows: the packed panel
};

}  // namespace

absl::Status EmitMatMul(EmitContext& ec, AccessEmitter& access) {
  MatMulEmitter(ec, access).Emit();
  return absl::OkStatus();
}

}  // namespace pto::jit
