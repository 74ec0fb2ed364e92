#include "jit/codegen/emit_transposing_copy.h"

#include <vector>

#include "jit/codegen/emit_loops.h"

namespace pto::jit {
namespace {

// [x0, y0, x1, y1, ...]: its first half (high = false) or its second.
llvm::Value* Interleave(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y, int lanes,
                        bool high) {
  std::vector<int> mask;
  for (int i = 0; i < lanes / 2; ++i) {
    const int at = (high ? lanes / 2 : 0) + i;
    mask.push_back(at);
    mask.push_back(lanes + at);
  }
  return b.CreateShuffleVector(x, y, mask);
}

// Vectors v[0..lanes) as the rows of a block become its columns: after log2(lanes) rounds of
// out[2i] = low(in[i], in[i + lanes/2]), out[2i + 1] = high(...), out[c] holds column c.
std::vector<llvm::Value*> Transpose(llvm::IRBuilder<>& b, std::vector<llvm::Value*> v) {
  const int lanes = static_cast<int>(v.size());
  for (int round = 1; round < lanes; round *= 2) {
    std::vector<llvm::Value*> out(lanes);
    for (int i = 0; i < lanes / 2; ++i) {
      out[2 * i] = Interleave(b, v[i], v[i + lanes / 2], lanes, false);
      out[2 * i + 1] = Interleave(b, v[i], v[i + lanes / 2], lanes, true);
    }
    v = std::move(out);
  }
  return v;
}

class TransposingCopyEmitter {
 public:
  TransposingCopyEmitter(EmitContext& ec, AccessEmitter& access, ir::TransposingCopy kind)
      : ec_(ec),
        access_(access),
        rank_(static_cast<int>(ec.kernel.domain.size())),
        lanes_(ec.lanes),
        load_(ec.kernel.output[0].access),
        store_(ec.kernel.stores[0].access),
        load_dim_(kind == ir::TransposingCopy::kStoresAcross ? rank_ - 1 : rank_ - 2),
        store_dim_(kind == ir::TransposingCopy::kStoresAcross ? rank_ - 2 : rank_ - 1) {
    for (int d = 0; d + 1 < rank_; ++d) row_dims_.push_back(ec.Sym(ec.kernel.domain[d]));
  }

  // The block whose first row has indices `idx` (its last entry unused) and first column `col`.
  void MoveBlock(std::vector<llvm::Value*> idx, llvm::Value* col) {
    llvm::IRBuilder<>& b = ec_.b;
    idx[rank_ - 1] = col;
    std::vector<llvm::Value*> in(lanes_);
    for (int t = 0; t < lanes_; ++t) {
      in[t] = access_.Load(load_, Moved(idx, load_dim_, t), load_dim_, lanes_);
    }
    std::vector<llvm::Value*> out = Transpose(b, std::move(in));
    for (int t = 0; t < lanes_; ++t) {
      access_.Store(store_, Moved(idx, store_dim_, t), store_dim_, lanes_, out[t]);
    }
  }

  // The task's rows in order: block(idx, row) for `lanes` rows that stay in the task and in one
  // run of the innermost row dim, else single(row).
  void RowBlocks(
      const std::function<void(const std::vector<llvm::Value*>& idx, llvm::Value* row)>& block,
      const std::function<void(llvm::Value* row)>& single) {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::AllocaInst* row_at = ec_.EntryAlloca(ec_.I64(), "row");
    b.CreateStore(ec_.lo[0], row_at);
    EmitWhileLoop(ec_, row_at, ec_.hi[0], [&](llvm::Value* row) {
      std::vector<llvm::Value*> idx = ec_.Unflatten(row, row_dims_);
      idx.resize(rank_, nullptr);
      llvm::Value* block_end = b.CreateAdd(row, ec_.I64Const(lanes_));
      llvm::Value* fits = b.CreateAnd(
          b.CreateICmpSLE(block_end, ec_.hi[0]),
          b.CreateICmpSLE(b.CreateAdd(idx[rank_ - 2], ec_.I64Const(lanes_)), row_dims_.back()));
      EmitIfElse(
          ec_, fits,
          [&] {
            block(idx, row);
            b.CreateStore(block_end, row_at);
          },
          [&] {
            single(row);
            b.CreateStore(b.CreateAdd(row, ec_.I64Const(1)), row_at);
          });
    });
  }

  // Full blocks of columns of [lo[1], full_end), then the rest.
  void ColumnBlocks(llvm::Value* full_end, const std::function<void(llvm::Value* col)>& block) {
    llvm::AllocaInst* col_at = ec_.EntryAlloca(ec_.I64(), "col");
    ec_.b.CreateStore(ec_.lo[1], col_at);
    EmitChunkLoop(ec_, col_at, full_end, lanes_, block, /*disable_unroll=*/true);
  }

 private:
  // idx moved t along the dim other than `vector_dim` of the last two.
  std::vector<llvm::Value*> Moved(std::vector<llvm::Value*> idx, int vector_dim, int t) {
    const int d = vector_dim == rank_ - 1 ? rank_ - 2 : rank_ - 1;
    idx[d] = ec_.b.CreateAdd(idx[d], ec_.I64Const(t));
    return idx;
  }

  EmitContext& ec_;
  AccessEmitter& access_;
  const int rank_, lanes_, load_, store_, load_dim_, store_dim_;
  std::vector<llvm::Value*> row_dims_;
};

}  // namespace

void EmitTransposingCopy(
    EmitContext& ec, AccessEmitter& access, ir::TransposingCopy kind,
    const std::function<void(llvm::Value* row, llvm::Value* lo, llvm::Value* hi)>& element_row) {
  llvm::IRBuilder<>& b = ec.b;
  TransposingCopyEmitter e(ec, access, kind);
  const int lanes = ec.lanes;
  llvm::Value* full_end =
      b.CreateSub(ec.hi[1], b.CreateSRem(b.CreateSub(ec.hi[1], ec.lo[1]), ec.I64Const(lanes)));
  if (kind == ir::TransposingCopy::kStoresAcross) {
    // The store is contiguous down the rows: per block of columns, the rows top to bottom.
    e.ColumnBlocks(full_end, [&](llvm::Value* col) {
      e.RowBlocks(
          [&](const std::vector<llvm::Value*>& idx, llvm::Value*) { e.MoveBlock(idx, col); },
          [&](llvm::Value* row) { element_row(row, col, b.CreateAdd(col, ec.I64Const(lanes))); });
    });
    EmitForLoop(ec, ec.lo[0], ec.hi[0],
                [&](llvm::Value* row) { element_row(row, full_end, ec.hi[1]); });
  } else {
    // The store is contiguous along the rows: per block of rows, the columns left to right.
    e.RowBlocks(
        [&](const std::vector<llvm::Value*>& idx, llvm::Value* row) {
          e.ColumnBlocks(full_end, [&](llvm::Value* col) { e.MoveBlock(idx, col); });
          EmitForLoop(ec, row, b.CreateAdd(row, ec.I64Const(lanes)),
                      [&](llvm::Value* r) { element_row(r, full_end, ec.hi[1]); });
        },
        [&](llvm::Value* row) { element_row(row, ec.lo[1], ec.hi[1]); });
  }
}

}  // namespace pto::jit
