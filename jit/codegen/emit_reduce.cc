// Reductions over one axis. Grid {outer = prod(domain[0..axis-1]), inner =
// prod(domain[axis+1..])}.
//  - axis is the last dim: vectorized along the reduced axis (config.unroll independent vector
//    accumulators, the last elements as one masked vector), then a horizontal reduction.
//  - otherwise: vectorized along the last dim, the inner range is walked in segments that stay
//    within one row of the last dim; each group of columns loops over the reduced axis.
// logsumexp makes two passes over the axis in either form: the max m (NaN-propagating), then
// the sum of exp(x - m') with m' = m, or 0 where m is infinite (a row of -inf gives log(0) =
// -inf, a row holding +inf gives +inf, as PyTorch's), and the result m' + log(sum).
#include <vector>

#include "jit/codegen/emit_expr.h"
#include "jit/codegen/emit_kinds.h"
#include "jit/codegen/emit_loops.h"
#include "jit/codegen/reduction_ops.h"
#include "jit/codegen/vector_math.h"

namespace pto::jit {
namespace {

class ReduceEmitter {
 public:
  ReduceEmitter(EmitContext& ec, AccessEmitter& access)
      : ec_(ec), access_(access), k_(ec.kernel), rank_(static_cast<int>(k_.domain.size())) {
    combine_ = k_.reduce == ir::ReduceKind::kMax || k_.reduce == ir::ReduceKind::kLogSumExp
                   ? Combine::kMax
                   : Combine::kSum;
    lse_ = k_.reduce == ir::ReduceKind::kLogSumExp;
    for (const ir::SymExpr& d : k_.domain) dims_.push_back(ec.Sym(d));
    for (const ir::Store& s : k_.stores) roots_.push_back(s.value);
    extent_f_ = ec.b.CreateSIToFP(dims_[k_.axis], ec.F32());
  }

  void Emit() {
    std::vector<llvm::Value*> outer_dims(dims_.begin(), dims_.begin() + k_.axis);
    EmitForLoop(ec_, ec_.lo[0], ec_.hi[0], [&](llvm::Value* o) {
      std::vector<llvm::Value*> idx = ec_.Unflatten(o, outer_dims);
      idx.resize(rank_, nullptr);
      if (k_.axis == rank_ - 1) {
        EmitForLoop(ec_, ec_.lo[1], ec_.hi[1], [&](llvm::Value*) { EmitLastAxis(idx); });
      } else {
        EmitInnerAxes(idx);
      }
    });
  }

 private:
  llvm::Value* Input(std::vector<llvm::Value*>& idx, int vec_dim, int width) {
    auto load = [&](int a) { return access_.Load(a, idx, vec_dim, width); };
    auto index = [&](int dim) { return DomainIndex(ec_.b, idx, vec_dim, width, dim); };
    auto gather = [&](int a, llvm::Value* i) { return access_.Gather(a, idx, vec_dim, width, i); };
    const int root = k_.input_value;
    return EmitProgram(ec_.b, k_.input, {&root, 1}, ec_.VecType(width), load, nullptr, index,
                       gather)[root];
  }

  llvm::Value* Finish(llvm::Value* total) {
    if (k_.reduce != ir::ReduceKind::kMean) return total;
    const int width =
        total->getType()->isVectorTy()
            ? static_cast<int>(
                  llvm::cast<llvm::FixedVectorType>(total->getType())->getNumElements())
            : 1;
    return ec_.b.CreateFDiv(total, SplatTo(ec_.b, extent_f_, width));
  }

  // logsumexp's shift from the max m: m, or 0 where m is +-inf.
  llvm::Value* SafeMax(llvm::Value* m) {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Value* inf = llvm::ConstantFP::getInfinity(m->getType());
    llvm::Value* abs = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, m);
    return b.CreateSelect(b.CreateFCmpOEQ(abs, inf), llvm::Constant::getNullValue(m->getType()), m);
  }

  llvm::Value* ShiftedExp(llvm::Value* x, llvm::Value* shift) {
    return EmitExp(ec_.b, ec_.b.CreateFSub(x, shift));
  }

  void Output(std::vector<llvm::Value*>& idx, int vec_dim, int width, llvm::Value* acc) {
    auto load = [&](int a) { return access_.Load(a, idx, vec_dim, width); };
    auto index = [&](int dim) { return DomainIndex(ec_.b, idx, vec_dim, width, dim); };
    auto gather = [&](int a, llvm::Value* i) { return access_.Gather(a, idx, vec_dim, width, i); };
    std::vector<llvm::Value*> v =
        EmitProgram(ec_.b, k_.output, roots_, ec_.VecType(width), load, acc, index, gather);
    for (const ir::Store& s : k_.stores) access_.Store(s.access, idx, vec_dim, width, v[s.value]);
  }

  void EmitLastAxis(std::vector<llvm::Value*> idx) {
    llvm::IRBuilder<>& b = ec_.b;
    const int unroll = std::max(1, k_.config.unroll);
    llvm::Type* vt = ec_.VecType(ec_.lanes);
    std::vector<llvm::AllocaInst*> accs;
    for (int u = 0; u < unroll; ++u) {
      accs.push_back(ec_.EntryAlloca(vt, "acc"));
      b.CreateStore(CombineIdentity(combine_, vt), accs.back());
    }
    EmitVectorSpan(
        ec_, ec_.I64Const(0), dims_[k_.axis], unroll,
        [&](llvm::Value* at, int width, int slot) {
          idx[k_.axis] = at;
          llvm::Value* x = Input(idx, k_.axis, width);
          x = IdentityOutsideMask(b, combine_, x, access_.lane_mask());
          b.CreateStore(CombineValues(b, combine_, b.CreateLoad(vt, accs[slot]), x), accs[slot]);
        },
        /*fused=*/false, &access_);
    llvm::Value* v = b.CreateLoad(vt, accs[0]);
    for (int u = 1; u < unroll; ++u) v = CombineValues(b, combine_, v, b.CreateLoad(vt, accs[u]));
    llvm::Value* total = CombineLanes(b, combine_, v);
    if (lse_) {
      llvm::Value* shift = SafeMax(total);
      for (int u = 0; u < unroll; ++u) {
        b.CreateStore(CombineIdentity(Combine::kSum, vt), accs[u]);
      }
      EmitVectorSpan(
          ec_, ec_.I64Const(0), dims_[k_.axis], unroll,
          [&](llvm::Value* at, int width, int slot) {
            idx[k_.axis] = at;
            llvm::Value* e = ShiftedExp(Input(idx, k_.axis, width), SplatTo(b, shift, width));
            e = IdentityOutsideMask(b, Combine::kSum, e, access_.lane_mask());
            b.CreateStore(b.CreateFAdd(b.CreateLoad(vt, accs[slot]), e), accs[slot]);
          },
          /*fused=*/false, &access_);
      llvm::Value* sum = b.CreateLoad(vt, accs[0]);
      for (int u = 1; u < unroll; ++u) sum = b.CreateFAdd(sum, b.CreateLoad(vt, accs[u]));
      total = b.CreateFAdd(shift, EmitLog(b, CombineLanes(b, Combine::kSum, sum)));
    }
    idx[k_.axis] = ec_.I64Const(0);
    Output(idx, -1, 1, Finish(total));
  }

  // `count` groups of `width` columns starting at column `at` of the last dim.
  void ReduceColumns(std::vector<llvm::Value*> idx, llvm::Value* at, int width, int count) {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Type* vt = ec_.VecType(width);
    const int last = rank_ - 1;
    std::vector<llvm::AllocaInst*> accs;
    for (int u = 0; u < count; ++u) {
      accs.push_back(ec_.EntryAlloca(vt, "acc"));
      b.CreateStore(CombineIdentity(combine_, vt), accs.back());
    }
    auto column = [&](int u) { return b.CreateAdd(at, ec_.I64Const(int64_t{u} * width)); };
    EmitForLoop(ec_, ec_.I64Const(0), dims_[k_.axis], [&](llvm::Value* r) {
      idx[k_.axis] = r;
      for (int u = 0; u < count; ++u) {
        idx[last] = column(u);
        llvm::Value* x = Input(idx, last, width);
        b.CreateStore(CombineValues(b, combine_, b.CreateLoad(vt, accs[u]), x), accs[u]);
      }
    });
    if (lse_) {
      std::vector<llvm::Value*> shifts;
      for (int u = 0; u < count; ++u) {
        shifts.push_back(SafeMax(b.CreateLoad(vt, accs[u])));
        b.CreateStore(CombineIdentity(Combine::kSum, vt), accs[u]);
      }
      EmitForLoop(ec_, ec_.I64Const(0), dims_[k_.axis], [&](llvm::Value* r) {
        idx[k_.axis] = r;
        for (int u = 0; u < count; ++u) {
          idx[last] = column(u);
          llvm::Value* e = ShiftedExp(Input(idx, last, width), shifts[u]);
          b.CreateStore(b.CreateFAdd(b.CreateLoad(vt, accs[u]), e), accs[u]);
        }
      });
      for (int u = 0; u < count; ++u) {
        b.CreateStore(b.CreateFAdd(shifts[u], EmitLog(b, b.CreateLoad(vt, accs[u]))), accs[u]);
      }
    }
    idx[k_.axis] = ec_.I64Const(0);
    for (int u = 0; u < count; ++u) {
      idx[last] = column(u);
      Output(idx, last, width, Finish(b.CreateLoad(vt, accs[u])));
    }
  }

  void EmitInnerAxes(std::vector<llvm::Value*> idx) {
    llvm::IRBuilder<>& b = ec_.b;
    const int last = rank_ - 1;
    std::vector<llvm::Value*> mid_dims(dims_.begin() + k_.axis + 1, dims_.end() - 1);
    llvm::AllocaInst* pos = ec_.EntryAlloca(ec_.I64(), "inner");
    b.CreateStore(ec_.lo[1], pos);
    EmitWhileLoop(ec_, pos, ec_.hi[1], [&](llvm::Value* i) {
      llvm::Value* j0 = b.CreateURem(i, dims_[last]);
      llvm::Value* mid = b.CreateUDiv(i, dims_[last]);
      llvm::Value* seg = b.CreateBinaryIntrinsic(
          llvm::Intrinsic::smin, b.CreateSub(dims_[last], j0), b.CreateSub(ec_.hi[1], i));
      std::vector<llvm::Value*> mid_idx = ec_.Unflatten(mid, mid_dims);
      for (size_t d = 0; d < mid_idx.size(); ++d) idx[k_.axis + 1 + d] = mid_idx[d];
      llvm::Value* end = b.CreateAdd(j0, seg);
      llvm::AllocaInst* col = ec_.EntryAlloca(ec_.I64(), "col");
      b.CreateStore(j0, col);
      const int unroll = std::max(1, k_.config.unroll);
      const int lanes = ec_.lanes;
      if (lanes > 1 && unroll > 1) {
        EmitChunkLoop(
            ec_, col, end, int64_t{lanes} * unroll,
            [&](llvm::Value* at) { ReduceColumns(idx, at, lanes, unroll); }, true);
      }
      EmitChunkLoop(
          ec_, col, end, lanes, [&](llvm::Value* at) { ReduceColumns(idx, at, lanes, 1); },
          lanes > 1);
      if (lanes > 1) {
        EmitChunkLoop(
            ec_, col, end, 1, [&](llvm::Value* at) { ReduceColumns(idx, at, 1, 1); }, true);
      }
      b.CreateStore(b.CreateAdd(i, seg), pos);
    });
  }

  EmitContext& ec_;
  AccessEmitter& access_;
  const ir::Kernel& k_;
  const int rank_;
  Combine combine_;
  bool lse_ = false;  // logsumexp: a second pass (see the file comment)
  std::vector<llvm::Value*> dims_;
  std::vector<int> roots_;
  llvm::Value* extent_f_ = nullptr;
};

}  // namespace

absl::Status EmitReduce(EmitContext& ec, AccessEmitter& access) {
  ReduceEmitter(ec, access).Emit();
  return absl::OkStatus();
}

}  // namespace pto::jit
