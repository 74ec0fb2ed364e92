// Scatter-add kernels: domain [P, N, M, Q], grid {rows = P * N, cols = Q} (ir::Kernel). A tile
// owns rows [lo, hi) of the result viewed as [P * N, Q] and the columns [clo, chi):
//  1. it zeroes them (with config.streaming_stores, non-temporal stores and a fence after);
//  2. for each p its rows touch, it walks the M index positions in order and adds the updates'
//     segment (p, m, clo..chi) into row (p, indices[m]) when that row is one of its own.
// Every element is owned by one tile and summed in index order: the result is the same bitwise
// however the grid is split. Vectorized along Q (config.unroll vectors per iteration, the last
// elements one masked vector). The cost is the result's size plus the updates' (and one scan
// of the indices per tile), not their product. Indices outside [0, N) add nothing (the
// reference drops them too).
#include <vector>

#include "jit/codegen/emit_kinds.h"
#include "jit/codegen/emit_loops.h"

namespace pto::jit {

absl::Status EmitScatterAdd(EmitContext& ec, AccessEmitter& access) {
  const ir::Kernel& k = ec.kernel;
  llvm::IRBuilder<>& b = ec.b;
  constexpr int kN = 1, kM = 2, kQ = 3;
  const int out = k.stores[0].access;
  llvm::Value* n = ec.Sym(k.domain[kN]);
  llvm::Value* m = ec.Sym(k.domain[kM]);
  const int unroll = std::max(1, k.config.unroll);
  const bool streaming = k.config.streaming_stores && ConstantValue(access.Stride(out, kQ)) == 1;

  // 1. Zero the tile's rows.
  EmitForLoop(ec, ec.lo[0], ec.hi[0], [&](llvm::Value* r) {
    std::vector<llvm::Value*> idx = {b.CreateUDiv(r, n), b.CreateURem(r, n), nullptr, nullptr};
    const SpanBody zero = [&](llvm::Value* q, int width, int /*slot*/) {
      idx[kQ] = q;
      access.Store(out, idx, kQ, width, llvm::Constant::getNullValue(ec.VecType(width)));
    };
    if (streaming) {
      idx[kQ] = ec.lo[1];
      llvm::Value* start = access.Address(out, idx);
      access.StreamStores(out);
      EmitAlignedVectorSpan(ec, ec.lo[1], ec.hi[1], unroll, start, zero, /*fused=*/false, &access);
      access.StreamStores(-1);
    } else {
      EmitVectorSpan(ec, ec.lo[1], ec.hi[1], unroll, zero, /*fused=*/false, &access);
    }
  });
  // The zeroes are stored before the adds below read them back.
  if (streaming) EmitStoreFence(ec);

  // 2. Add the updates whose index falls in the tile's rows, p by p.
  llvm::Value* first_p = b.CreateUDiv(ec.lo[0], n);
  llvm::Value* end_p =
      b.CreateAdd(b.CreateUDiv(b.CreateSub(ec.hi[0], ec.I64Const(1)), n), ec.I64Const(1));
  EmitForLoop(ec, first_p, end_p, [&](llvm::Value* p) {
    // The tile's rows of this p: [row_lo, row_hi) of [0, N).
    llvm::Value* base = b.CreateMul(p, n);
    llvm::Value* row_lo =
        b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b.CreateSub(ec.lo[0], base), ec.I64Const(0));
    llvm::Value* row_hi =
        b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateSub(ec.hi[0], base), n);
    llvm::Value* rows = b.CreateSub(row_hi, row_lo);
    EmitForLoop(
        ec, ec.I64Const(0), m,
        [&](llvm::Value* position) {
          std::vector<llvm::Value*> at = {p, nullptr, position, nullptr};
          llvm::Value* row = b.CreateSExt(access.Load(k.b, at, -1, 1), ec.I64());
          // One unsigned compare: an index below row_lo (negative ones too) wraps above `rows`.
          EmitIfElse(ec, b.CreateICmpULT(b.CreateSub(row, row_lo), rows), [&] {
            at[kN] = row;
            EmitVectorSpan(
                ec, ec.lo[1], ec.hi[1], unroll,
                [&](llvm::Value* q, int width, int /*slot*/) {
                  at[kQ] = q;
                  llvm::Value* sum = b.CreateFAdd(access.Load(out, at, kQ, width),
                                                  access.Load(k.a, at, kQ, width));
                  access.Store(out, at, kQ, width, sum);
                },
                /*fused=*/false, &access);
          });
        },
        /*disable_unroll=*/true);
  });
  return absl::OkStatus();
}

}  // namespace pto::jit
