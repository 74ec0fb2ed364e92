// Row ops over the last axis: softmax, log_softmax, layernorm, rmsnorm. Grid {rows, 1}.
// Each statistic is one vectorized pass over the row that re-evaluates the `input` program
// (max, then sum of exp(x - max); mean, then sum of squared deviations), and a final pass
// evaluates `output` with kAcc = the normalized value.
#include <vector>

#include "jit/codegen/emit_expr.h"
#include "jit/codegen/emit_kinds.h"
#include "jit/codegen/emit_loops.h"
#include "jit/codegen/reduction_ops.h"
#include "jit/codegen/vector_math.h"

namespace pto::jit {
namespace {

class RowOpEmitter {
 public:
  RowOpEmitter(EmitContext& ec, AccessEmitter& access)
      : ec_(ec), access_(access), k_(ec.kernel), rank_(static_cast<int>(k_.domain.size())) {
    for (const ir::SymExpr& d : k_.domain) dims_.push_back(ec.Sym(d));
    for (const ir::Store& s : k_.stores) roots_.push_back(s.value);
    cols_ = dims_[rank_ - 1];
    cols_f_ = ec.b.CreateSIToFP(cols_, ec.F32());
    unroll_ = std::max(1, k_.config.unroll);
  }

  void Emit() {
    std::vector<llvm::Value*> row_dims(dims_.begin(), dims_.end() - 1);
    EmitForLoop(ec_, ec_.lo[0], ec_.hi[0], [&](llvm::Value* row) {
      EmitForLoop(ec_, ec_.lo[1], ec_.hi[1], [&](llvm::Value*) {
        idx_ = ec_.Unflatten(row, row_dims);
        idx_.resize(rank_, nullptr);
        EmitRow();
      });
    });
  }

 private:
  using Transform = std::function<llvm::Value*(llvm::Value* x, int width)>;

  llvm::Value* X(llvm::Value* col, int width) {
    idx_[rank_ - 1] = col;
    auto load = [&](int a) { return access_.Load(a, idx_, rank_ - 1, width); };
    const int root = k_.input_value;
    return EmitProgram(ec_.b, k_.input, {&root, 1}, ec_.VecType(width), load, nullptr)[root];
  }

  llvm::Value* S(llvm::Value* scalar, int width) { return SplatTo(ec_.b, scalar, width); }

  // Combines f(x) over the row into a scalar.
  llvm::Value* RowReduce(Combine c, const Transform& f) {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Type* vt = ec_.VecType(ec_.lanes);
    std::vector<llvm::AllocaInst*> accs;
    for (int u = 0; u < unroll_; ++u) {
      accs.push_back(ec_.EntryAlloca(vt, "racc"));
      b.CreateStore(CombineIdentity(c, vt), accs.back());
    }
    llvm::AllocaInst* tail = ec_.EntryAlloca(ec_.F32(), "racc.tail");
    b.CreateStore(CombineIdentity(c, ec_.F32()), tail);
    EmitVectorSpan(ec_, ec_.I64Const(0), cols_, unroll_, [&](llvm::Value* at, int width, int slot) {
      llvm::Value* v = f(X(at, width), width);
      llvm::AllocaInst* acc = width == ec_.lanes ? accs[slot] : tail;
      b.CreateStore(CombineValues(b, c, b.CreateLoad(acc->getAllocatedType(), acc), v), acc);
    });
    llvm::Value* v = b.CreateLoad(vt, accs[0]);
    for (int u = 1; u < unroll_; ++u) v = CombineValues(b, c, v, b.CreateLoad(vt, accs[u]));
    llvm::Value* total = CombineLanes(b, c, v);
    if (ec_.lanes > 1) total = CombineValues(b, c, total, b.CreateLoad(ec_.F32(), tail));
    return total;
  }

  // Final pass: kAcc = y(x) at each point.
  void Normalize(const Transform& y) {
    EmitVectorSpan(ec_, ec_.I64Const(0), cols_, unroll_, [&](llvm::Value* at, int width, int) {
      llvm::Value* acc = y(X(at, width), width);
      auto load = [&](int a) { return access_.Load(a, idx_, rank_ - 1, width); };
      std::vector<llvm::Value*> v =
          EmitProgram(ec_.b, k_.output, roots_, ec_.VecType(width), load, acc);
      for (const ir::Store& s : k_.stores) {
        access_.Store(s.access, idx_, rank_ - 1, width, v[s.value]);
      }
    });
  }

  void EmitRow() {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Value* one = llvm::ConstantFP::get(ec_.F32(), 1.0);
    llvm::Value* eps = llvm::ConstantFP::get(ec_.F32(), k_.eps);
    switch (k_.row_op) {
      case ir::RowOpKind::kSoftmax:
      case ir::RowOpKind::kLogSoftmax: {
        llvm::Value* m = RowReduce(Combine::kMax, [](llvm::Value* x, int) { return x; });
        llvm::Value* s = RowReduce(Combine::kSum, [&](llvm::Value* x, int w) {
          return EmitExp(b, b.CreateFSub(x, S(m, w)));
        });
        if (k_.row_op == ir::RowOpKind::kSoftmax) {
          llvm::Value* inv = b.CreateFDiv(one, s);
          Normalize([&](llvm::Value* x, int w) {
            return b.CreateFMul(EmitExp(b, b.CreateFSub(x, S(m, w))), S(inv, w));
          });
        } else {
          llvm::Value* log_s = EmitLog(b, s);
          Normalize([&](llvm::Value* x, int w) {
            return b.CreateFSub(b.CreateFSub(x, S(m, w)), S(log_s, w));
          });
        }
        break;
      }
      case ir::RowOpKind::kLayerNorm: {
        llvm::Value* sum = RowReduce(Combine::kSum, [](llvm::Value* x, int) { return x; });
        llvm::Value* mean = b.CreateFDiv(sum, cols_f_);
        llvm::Value* ss = RowReduce(Combine::kSum, [&](llvm::Value* x, int w) {
          llvm::Value* d = b.CreateFSub(x, S(mean, w));
          return b.CreateFMul(d, d);
        });
        llvm::Value* var = b.CreateFDiv(ss, cols_f_);
        llvm::Value* rstd = EmitRsqrt(b, b.CreateFAdd(var, eps));
        Normalize([&](llvm::Value* x, int w) {
          return b.CreateFMul(b.CreateFSub(x, S(mean, w)), S(rstd, w));
        });
        break;
      }
      case ir::RowOpKind::kRmsNorm: {
        llvm::Value* ss =
            RowReduce(Combine::kSum, [&](llvm::Value* x, int) { return b.CreateFMul(x, x); });
        llvm::Value* rinv = EmitRsqrt(b, b.CreateFAdd(b.CreateFDiv(ss, cols_f_), eps));
        Normalize([&](llvm::Value* x, int w) { return b.CreateFMul(x, S(rinv, w)); });
        break;
      }
    }
  }

  EmitContext& ec_;
  AccessEmitter& access_;
  const ir::Kernel& k_;
  const int rank_;
  int unroll_ = 1;
  std::vector<llvm::Value*> dims_;
  std::vector<int> roots_;
  std::vector<llvm::Value*> idx_;
  llvm::Value* cols_ = nullptr;
  llvm::Value* cols_f_ = nullptr;
};

}  // namespace

absl::Status EmitRowOp(EmitContext& ec, AccessEmitter& access) {
  RowOpEmitter(ec, access).Emit();
  return absl::OkStatus();
}

}  // namespace pto::jit
