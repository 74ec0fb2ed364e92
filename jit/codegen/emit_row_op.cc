// Row ops over the last axis: softmax, log_softmax, layernorm, rmsnorm. Grid {rows, 1}.
// Each statistic is one vectorized pass over the row that re-evaluates the `input` program
// (max, then sum of exp(x - max); mean, then sum of squared deviations), and a final pass
// evaluates `output` with kAcc = the normalized value. Softmax whose output program only stores
// kAcc keeps exp(x - max) in the output during the sum pass and scales it in place after, so
// exp runs once per element. Passes run config.unroll vectors per iteration as one wide vector
// (EmitVectorSpan's fused form); the last pass (softmax keeping exp: its exp pass) prefetches the
// next row's inputs into the L2, so that row's memory traffic overlaps this row's arithmetic
// (the row's later passes hit the cache and would otherwise leave memory idle).
// The backward ops (softmax_grad...) read two rows (y or x, and dy) and make two passes: one
// for every row sum they need at once (RowSums), one for the output; short static rows are
// loaded once into registers instead (one row at a time). layer_norm_grad's mean and variance
// come from sums shifted by the row's first element (see EmitRowGrad).
#include <algorithm>
#include <vector>

#include "jit/codegen/emit_access.h"
#include "jit/codegen/emit_bounds_check.h"
#include "jit/codegen/emit_expr.h"
#include "jit/codegen/emit_kinds.h"
#include "jit/codegen/emit_loops.h"
#include "jit/codegen/reduction_ops.h"
#include "jit/codegen/vector_math.h"

namespace pto::jit {
namespace {

// Softmax's exp(x - max) is 0 below this: e^-64 = 1.6e-28 is far below one ulp of the row sum
// (at least 1), and times 1/sum it stays normal (no subnormal assists) for rows of up to 10^10.
constexpr double kSoftmaxFlushBelow = -64.0;
// A static row of at most this many vectors is kept in registers (EmitRegisterRows).
constexpr int kRegisterRowVectors = 16;
// Register rows run side by side (EmitRegisterRows) while they have at most this many vectors
// together, and at most kRegisterRowsInFlight rows: the rows' chains interleave, and more
// vectors than that spill (measurements: docs/default_configs.md).
constexpr int kRowsInFlightVectors = 8;
constexpr int kRegisterRowsInFlight = 4;
// Softmax rows of up to this many vectors that run one at a time are software-pipelined
// (EmitPipelinedRegisterRows): the next row's max runs beside this row's exps.
constexpr int kPipelinedRowVectors = 8;

// Streaming stores apply to a row op's one store along a unit stride.
bool StreamsRowOutput(const ir::Kernel& k, llvm::Value* out_row_stride) {
  return k.config.streaming_stores && k.stores.size() == 1 && ConstantValue(out_row_stride) == 1;
}

// Softmax that keeps exp(x - max) for its final pass: kAcc is its only output, so the output
// (or the scratch row) can hold intermediate values.
bool KeepsExp(const ir::Kernel& k) {
  return k.row_op == ir::RowOpKind::kSoftmax && k.stores.size() == 1 &&
         k.output[k.stores[0].value].op == ir::ExprOp::kAcc;
}

class RowOpEmitter {
 public:
  RowOpEmitter(EmitContext& ec, AccessEmitter& access)
      : ec_(ec), access_(access), k_(ec.kernel), rank_(static_cast<int>(k_.domain.size())) {
    for (const ir::SymExpr& d : k_.domain) dims_.push_back(ec.Sym(d));
    for (const ir::Store& s : k_.stores) roots_.push_back(s.value);
    cols_ = dims_[rank_ - 1];
    cols_f_ = ec.b.CreateSIToFP(cols_, ec.F32());
    unroll_ = std::max(1, k_.config.unroll);
    streaming_ =
        !k_.stores.empty() && StreamsRowOutput(k_, access.Stride(k_.stores[0].access, rank_ - 1));
    row_scratch_ = RowOpScratchBytes(k_) > 0 ? ec.fn->getArg(3) : nullptr;
  }

  void Emit() {
    if (const int nv = RegisterRowVectors(); nv > 0 && ir::IsRowGrad(k_.row_op)) {
      // Backward rows in registers, one at a time.
      EmitForLoop(ec_, ec_.lo[0], ec_.hi[0], [&](llvm::Value* row) {
        EmitForLoop(ec_, ec_.lo[1], ec_.hi[1],
                    [&](llvm::Value*) { EmitRegisterRowGrad(nv, RowIndex(row)); });
      });
      return;
    } else if (nv > 0) {
      // Rows in registers, several at a time while they fit, then single rows.
      llvm::AllocaInst* row = ec_.EntryAlloca(ec_.I64(), "row");
      ec_.b.CreateStore(ec_.lo[0], row);
      auto rows_loop = [&](int rows) {
        EmitChunkLoop(
            ec_, row, ec_.hi[0], rows,
            [&](llvm::Value* first) {
              EmitForLoop(ec_, ec_.lo[1], ec_.hi[1], [&](llvm::Value*) {
                std::vector<std::vector<llvm::Value*>> idx;
                for (int r = 0; r < rows; ++r) {
                  idx.push_back(RowIndex(ec_.b.CreateAdd(first, ec_.I64Const(r))));
                }
                EmitRegisterRows(nv, idx);
              });
            },
            /*disable_unroll=*/true);
      };
      const int group = RegisterRowsInFlight(nv);
      if (group == 1 && PipelinesRowMax(nv)) {
        EmitPipelinedRegisterRows(nv);
        return;
      }
      if (group > 1) rows_loop(group);
      rows_loop(1);
      return;
    }
    EmitForLoop(ec_, ec_.lo[0], ec_.hi[0], [&](llvm::Value* row) {
      EmitForLoop(ec_, ec_.lo[1], ec_.hi[1], [&](llvm::Value*) {
        idx_ = RowIndex(row);
        next_idx_.clear();
        // The last row's "next row" is one past the end: prefetches never fault.
        if (rank_ >= 2) next_idx_ = RowIndex(ec_.b.CreateAdd(row, ec_.I64Const(1)));
        EmitRow();
      });
    });
    if (streaming_) EmitStoreFence(ec_);
  }

 private:
  using Transform = std::function<llvm::Value*(llvm::Value* x, int width)>;

  llvm::Value* X(llvm::Value* col, int width) {
    idx_[rank_ - 1] = col;
    auto load = [&](int a) { return access_.Load(a, idx_, rank_ - 1, width); };
    auto index = [&](int dim) { return DomainIndex(ec_.b, idx_, rank_ - 1, width, dim); };
    auto gather = [&](int a, llvm::Value* i) {
      return access_.Gather(a, idx_, rank_ - 1, width, i);
    };
    const int root = k_.input_value;
    return EmitProgram(ec_.b, k_.input, {&root, 1}, ec_.VecType(width), load, nullptr, index,
                       gather)[root];
  }

  llvm::Value* S(llvm::Value* scalar, int width) { return SplatTo(ec_.b, scalar, width); }

  // Combines f(x) over the row into a scalar. `f` gets the point's column as well.
  llvm::Value* RowReduce(
      Combine c, const Transform& f,
      const std::function<void(llvm::Value* at, int width, llvm::Value* fx)>& also = nullptr) {
    llvm::IRBuilder<>& b = ec_.b;
    // One accumulator per width the span uses: lanes * unroll (fused), lanes, 1.
    std::vector<std::pair<int, llvm::AllocaInst*>> accs;
    for (int w : {ec_.lanes * unroll_, ec_.lanes, 1}) {
      bool seen = false;
      for (auto& [aw, _] : accs) seen |= aw == w;
      if (seen) continue;
      accs.push_back({w, ec_.EntryAlloca(ec_.VecType(w), "racc")});
      b.CreateStore(CombineIdentity(c, ec_.VecType(w)), accs.back().second);
    }
    auto acc_for = [&](int width) {
      for (auto& [w, a] : accs) {
        if (w == width) return a;
      }
      return static_cast<llvm::AllocaInst*>(nullptr);
    };
    EmitVectorSpan(
        ec_, ec_.I64Const(0), cols_, unroll_,
        [&](llvm::Value* at, int width, int) {
          llvm::Value* v = f(X(at, width), width);
          if (also) also(at, width, v);
          llvm::AllocaInst* acc = acc_for(width);
          v = IdentityOutsideMask(b, c, v, access_.lane_mask());
          b.CreateStore(CombineValues(b, c, b.CreateLoad(acc->getAllocatedType(), acc), v), acc);
        },
        /*fused=*/true, &access_);
    llvm::Value* total = nullptr;
    for (auto& [w, a] : accs) {
      llvm::Value* part = CombineLanes(b, c, b.CreateLoad(a->getAllocatedType(), a));
      total = total == nullptr ? part : CombineValues(b, c, total, part);
    }
    return total;
  }

  // The kept exp row in the scratch at column `at` (masked in the masked tail: the row ends
  // there).
  llvm::Value* KeptAt(llvm::Value* at) {
    return ec_.b.CreateInBoundsGEP(ec_.F32(), row_scratch_, at);
  }

  // Prefetches (into the L2) the next row's elements of every input the `input` program loads
  // with unit stride along the row, for columns [at, at + width).
  void PrefetchNextRow(llvm::Value* at, int width) {
    if (next_idx_.empty()) return;
    next_idx_[rank_ - 1] = at;
    for (int a : access_.StreamedLoads(k_.input, rank_ - 1)) {
      access_.PrefetchAhead(a, next_idx_, width, /*bytes=*/0);
    }
  }

  // Final pass: kAcc = y(x) at each point.
  void Normalize(const Transform& y) {
    FinalSpan([&](llvm::Value* at, int width, int) {
      if (width > 1) PrefetchNextRow(at, width);
      llvm::Value* acc = y(X(at, width), width);
      StoreOutput(at, width, acc);
    });
  }

  // The pass that writes the output: with streaming stores, after a peel to the output row's
  // alignment (its vector stores are non-temporal).
  void FinalSpan(const SpanBody& body) {
    if (!streaming_) {
      EmitVectorSpan(ec_, ec_.I64Const(0), cols_, unroll_, body, /*fused=*/true, &access_);
      return;
    }
    idx_[rank_ - 1] = ec_.I64Const(0);
    llvm::Value* start = access_.Address(k_.stores[0].access, idx_);
    access_.StreamStores(k_.stores[0].access);
    EmitAlignedVectorSpan(ec_, ec_.I64Const(0), cols_, unroll_, start, body, /*fused=*/true,
                          &access_);
    access_.StreamStores(-1);
  }

  void StoreOutput(llvm::Value* at, int width, llvm::Value* acc) {
    idx_[rank_ - 1] = at;
    auto load = [&](int a) { return access_.Load(a, idx_, rank_ - 1, width); };
    auto index = [&](int dim) { return DomainIndex(ec_.b, idx_, rank_ - 1, width, dim); };
    auto gather = [&](int a, llvm::Value* i) {
      return access_.Gather(a, idx_, rank_ - 1, width, i);
    };
    std::vector<llvm::Value*> v =
        EmitProgram(ec_.b, k_.output, roots_, ec_.VecType(width), load, acc, index, gather);
    for (const ir::Store& s : k_.stores) {
      access_.Store(s.access, idx_, rank_ - 1, width, v[s.value]);
    }
  }

  // The row's vectors (the last one masked when the row is not a whole number of them) when it
  // is short and static (and its stores are ordinary): 0 otherwise.
  int RegisterRowVectors() const {
    const ir::SymExpr& cols = k_.domain.back();
    if (streaming_ || ec_.lanes <= 1 || !cols.IsConstant() || cols.constant() <= 0) return 0;
    const int64_t nv = (cols.constant() + ec_.lanes - 1) / ec_.lanes;
    return nv > kRegisterRowVectors ? 0 : static_cast<int>(nv);
  }

  // `c` over `v` (a tree of vectors, then across lanes).
  llvm::Value* TreeReduce(Combine c, std::vector<llvm::Value*> v) {
    llvm::IRBuilder<>& b = ec_.b;
    while (v.size() > 1) {
      std::vector<llvm::Value*> next;
      for (size_t i = 0; i + 1 < v.size(); i += 2)
        next.push_back(CombineValues(b, c, v[i], v[i + 1]));
      if (v.size() % 2 == 1) next.push_back(v.back());
      v = std::move(next);
    }
    return CombineLanes(b, c, v[0]);
  }

  // 1 / sqrt(ss / cols + eps): layernorm's and rmsnorm's scale from a row's sum of squares.
  llvm::Value* InvRootMean(llvm::Value* ss) {
    llvm::Value* eps = llvm::ConstantFP::get(ec_.F32(), k_.eps);
    return EmitRsqrt(ec_.b, ec_.b.CreateFAdd(ec_.b.CreateFDiv(ss, cols_f_), eps));
  }

  // The index of row `row` (flattened over the dims before the last), the last dim unset.
  std::vector<llvm::Value*> RowIndex(llvm::Value* row) {
    std::vector<llvm::Value*> idx =
        ec_.Unflatten(row, std::vector<llvm::Value*>(dims_.begin(), dims_.end() - 1));
    idx.resize(rank_, nullptr);
    return idx;
  }

  // Register rows emitted side by side: a short row is a chain of dependent steps (the max and
  // its horizontal reduction, exp, the sum and its reduction, the reciprocal, the scale) longer
  // than its arithmetic; rows side by side overlap their chains.
  static int RegisterRowsInFlight(int nv) {
    return std::clamp(kRowsInFlightVectors / nv, 1, kRegisterRowsInFlight);
  }

  // Short rows (RegisterRowVectors, at row indices `rows`) are loaded once and stay in
  // registers: the statistics and the output come from those values, one pass over memory with
  // no loop per pass (attention's softmax over 128 keys, a layernorm over a model dim of 128:
  // their per-pass loop and horizontal reductions cost more than the arithmetic). Each step
  // runs over every row before the next step, so the rows' chains interleave.
  // Softmax's rows that run one at a time (too long to run side by side) compute the next
  // row's max while they finish the current one (EmitPipelinedRegisterRows).
  bool PipelinesRowMax(int nv) const {
    return nv <= kPipelinedRowVectors &&
           (k_.row_op == ir::RowOpKind::kSoftmax || k_.row_op == ir::RowOpKind::kLogSoftmax);
  }

  // A register row's last vector's lanes within the row; null when the row fills it.
  llvm::Value* LastVectorMask() {
    const int64_t tail = k_.domain.back().constant() % ec_.lanes;
    return tail > 0 ? ec_.LaneMask(ec_.I64Const(tail), ec_.lanes) : nullptr;
  }

  // The max over row `row`'s values (a register row of nv vectors), splat to a vector.
  llvm::Value* RegisterRowMax(int nv, const std::vector<llvm::Value*>& row) {
    const int lanes = ec_.lanes;
    llvm::Value* last_mask = LastVectorMask();
    std::vector<llvm::Value*> x;
    idx_ = row;
    for (int i = 0; i < nv; ++i) {
      access_.MaskLanes(i == nv - 1 ? last_mask : nullptr);
      x.push_back(X(ec_.I64Const(int64_t{i} * lanes), lanes));
    }
    access_.MaskLanes(nullptr);
    x.back() = IdentityOutsideMask(ec_.b, Combine::kRowMax, x.back(), last_mask);
    return S(TreeReduce(Combine::kRowMax, std::move(x)), lanes);
  }

  // Register rows one at a time, software-pipelined: each iteration takes the max of the next
  // row (its loads and reduction) and then finishes the current row with the max the previous
  // iteration left. The current row's exps do not wait on a reduction, and the next row's
  // loads and max run beside them: in one row's chain (max, its horizontal reduction, exp,
  // sum, reduction, reciprocal, scale) the waiting steps filled the scheduler.
  void EmitPipelinedRegisterRows(int nv) {
    llvm::IRBuilder<>& b = ec_.b;
    EmitForLoop(ec_, ec_.lo[1], ec_.hi[1], [&](llvm::Value*) {
      llvm::AllocaInst* next_max = ec_.EntryAlloca(ec_.VecType(ec_.lanes), "nextmax");
      llvm::Value* last = b.CreateSub(ec_.hi[0], ec_.I64Const(1));
      EmitIfElse(ec_, b.CreateICmpSLT(ec_.lo[0], ec_.hi[0]),
                 [&]() { b.CreateStore(RegisterRowMax(nv, RowIndex(ec_.lo[0])), next_max); });
      EmitForLoop(ec_, ec_.lo[0], ec_.hi[0], [&](llvm::Value* row) {
        const std::vector<llvm::Value*> m = {b.CreateLoad(ec_.VecType(ec_.lanes), next_max)};
        // The last row's "next" is itself again (a wasted max, no read past the tile).
        llvm::Value* next =
            b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateAdd(row, ec_.I64Const(1)), last);
        b.CreateStore(RegisterRowMax(nv, RowIndex(next)), next_max);
        EmitRegisterRows(nv, {RowIndex(row)}, &m);
      });
    });
  }

  void EmitRegisterRows(int nv, const std::vector<std::vector<llvm::Value*>>& rows,
                        const std::vector<llvm::Value*>* row_max = nullptr) {
    llvm::IRBuilder<>& b = ec_.b;
    const int lanes = ec_.lanes;
    const size_t nr = rows.size();
    auto at = [&](int i) { return ec_.I64Const(int64_t{i} * lanes); };
    // The last vector's lanes past the row are masked off: its loads and stores skip them and
    // every statistic gets its identity there.
    llvm::Value* last_mask = LastVectorMask();
    auto mask_for = [&](int i) { access_.MaskLanes(i == nv - 1 ? last_mask : nullptr); };
    using Row = std::vector<llvm::Value*>;
    // f(r) for each row r.
    auto per_row = [&](const std::function<llvm::Value*(size_t r)>& f) {
      Row out;
      for (size_t r = 0; r < nr; ++r) out.push_back(f(r));
      return out;
    };
    auto reduce = [&](Combine c, const std::vector<Row>& v) {
      return per_row([&](size_t r) {
        Row row = v[r];
        row.back() = IdentityOutsideMask(b, c, row.back(), last_mask);
        return TreeReduce(c, std::move(row));
      });
    };
    auto splat = [&](const Row& scalars) {
      return per_row([&](size_t r) { return S(scalars[r], lanes); });
    };
    auto map = [&](const std::function<llvm::Value*(size_t r, llvm::Value*)>& f,
                   const std::vector<Row>& v) {
      std::vector<Row> out(nr);
      for (int i = 0; i < nv; ++i) {
        for (size_t r = 0; r < nr; ++r) out[r].push_back(f(r, v[r][i]));
      }
      return out;
    };
    std::vector<Row> x(nr), y;
    for (int i = 0; i < nv; ++i) {
      mask_for(i);
      for (size_t r = 0; r < nr; ++r) {
        idx_ = rows[r];
        x[r].push_back(X(at(i), lanes));
      }
    }
    access_.MaskLanes(nullptr);
    llvm::Value* one = llvm::ConstantFP::get(ec_.F32(), 1.0);
    switch (k_.row_op) {
      case ir::RowOpKind::kSoftmax:
      case ir::RowOpKind::kLogSoftmax: {
        const Row m = row_max != nullptr ? *row_max : splat(reduce(Combine::kRowMax, x));
        const std::vector<Row> e = map(
            [&](size_t r, llvm::Value* v) {
              return EmitExp(b, b.CreateFSub(v, m[r]), kSoftmaxFlushBelow);
            },
            x);
        const Row s = reduce(Combine::kSum, e);
        if (k_.row_op == ir::RowOpKind::kSoftmax) {
          const Row inv = splat(per_row([&](size_t r) { return b.CreateFDiv(one, s[r]); }));
          y = map([&](size_t r, llvm::Value* v) { return b.CreateFMul(v, inv[r]); }, e);
        } else {
          const Row log_s = splat(per_row([&](size_t r) { return EmitLog(b, s[r]); }));
          y = map([&](size_t r,
                      llvm::Value* v) { return b.CreateFSub(b.CreateFSub(v, m[r]), log_s[r]); },
                  x);
        }
        break;
      }
      case ir::RowOpKind::kLayerNorm: {
        const Row sum = reduce(Combine::kSum, x);
        const Row mean = splat(per_row([&](size_t r) { return b.CreateFDiv(sum[r], cols_f_); }));
        const std::vector<Row> d =
            map([&](size_t r, llvm::Value* v) { return b.CreateFSub(v, mean[r]); }, x);
        const Row ss = reduce(Combine::kSum,
                              map([&](size_t, llvm::Value* v) { return b.CreateFMul(v, v); }, d));
        const Row rstd = splat(per_row([&](size_t r) { return InvRootMean(ss[r]); }));
        y = map([&](size_t r, llvm::Value* v) { return b.CreateFMul(v, rstd[r]); }, d);
        break;
      }
      case ir::RowOpKind::kRmsNorm: {
        const Row ss = reduce(Combine::kSum,
                              map([&](size_t, llvm::Value* v) { return b.CreateFMul(v, v); }, x));
        const Row rinv = splat(per_row([&](size_t r) { return InvRootMean(ss[r]); }));
        y = map([&](size_t r, llvm::Value* v) { return b.CreateFMul(v, rinv[r]); }, x);
        break;
      }
      default:  // the backward ops are not kept in registers (RegisterRowVectors)
        return;
    }
    for (int i = 0; i < nv; ++i) {
      mask_for(i);
      for (size_t r = 0; r < nr; ++r) {
        idx_ = rows[r];
        StoreOutput(at(i), lanes, y[r][i]);
      }
    }
    access_.MaskLanes(nullptr);
  }

  // A backward op's two rows at columns [col, col + width): {input_value, input_dy}.
  std::pair<llvm::Value*, llvm::Value*> XDy(llvm::Value* col, int width) {
    idx_[rank_ - 1] = col;
    auto load = [&](int a) { return access_.Load(a, idx_, rank_ - 1, width); };
    auto index = [&](int dim) { return DomainIndex(ec_.b, idx_, rank_ - 1, width, dim); };
    auto gather = [&](int a, llvm::Value* i) {
      return access_.Gather(a, idx_, rank_ - 1, width, i);
    };
    const int roots[2] = {k_.input_value, k_.input_dy};
    std::vector<llvm::Value*> v =
        EmitProgram(ec_.b, k_.input, roots, ec_.VecType(width), load, nullptr, index, gather);
    return {v[roots[0]], v[roots[1]]};
  }

  using GradTerms = std::function<std::vector<llvm::Value*>(llvm::Value* x, llvm::Value* dy)>;

  // The row sums of the `count` terms f(x, dy) returns, in one pass over the row.
  std::vector<llvm::Value*> RowSums(int count, const GradTerms& f) {
    llvm::IRBuilder<>& b = ec_.b;
    // Per width the span uses (lanes * unroll fused, lanes, 1): one accumulator per term.
    std::vector<std::pair<int, std::vector<llvm::AllocaInst*>>> accs;
    for (int w : {ec_.lanes * unroll_, ec_.lanes, 1}) {
      bool seen = false;
      for (auto& [aw, _] : accs) seen |= aw == w;
      if (seen) continue;
      std::vector<llvm::AllocaInst*> per_term;
      for (int t = 0; t < count; ++t) {
        per_term.push_back(ec_.EntryAlloca(ec_.VecType(w), "gacc"));
        b.CreateStore(CombineIdentity(Combine::kSum, ec_.VecType(w)), per_term.back());
      }
      accs.push_back({w, std::move(per_term)});
    }
    EmitVectorSpan(
        ec_, ec_.I64Const(0), cols_, unroll_,
        [&](llvm::Value* at, int width, int) {
          auto [x, dy] = XDy(at, width);
          std::vector<llvm::Value*> terms = f(x, dy);
          for (auto& [w, per_term] : accs) {
            if (w != width) continue;
            for (int t = 0; t < count; ++t) {
              llvm::Value* v = IdentityOutsideMask(b, Combine::kSum, terms[t], access_.lane_mask());
              llvm::AllocaInst* acc = per_term[t];
              b.CreateStore(b.CreateFAdd(b.CreateLoad(acc->getAllocatedType(), acc), v), acc);
            }
          }
        },
        /*fused=*/true, &access_);
    std::vector<llvm::Value*> totals(count, nullptr);
    for (auto& [w, per_term] : accs) {
      for (int t = 0; t < count; ++t) {
        llvm::Value* part = CombineLanes(
            b, Combine::kSum, b.CreateLoad(per_term[t]->getAllocatedType(), per_term[t]));
        totals[t] = totals[t] == nullptr ? part : b.CreateFAdd(totals[t], part);
      }
    }
    return totals;
  }

  using GradDx = std::function<llvm::Value*(llvm::Value* x, llvm::Value* dy, int width)>;

  // Final pass of a backward op: kAcc = dx(x, dy, width) at each point.
  void GradOutput(const GradDx& dx) {
    FinalSpan([&](llvm::Value* at, int width, int) {
      if (width > 1) PrefetchNextRow(at, width);
      auto [x, dy] = XDy(at, width);
      StoreOutput(at, width, dx(x, dy, width));
    });
  }

  // Where a backward op's row comes from and goes to: the row's first x (x[0]), the row sums
  // of `count` terms, and the output pass.
  struct GradPasses {
    std::function<llvm::Value*()> first;
    std::function<std::vector<llvm::Value*>(int count, const GradTerms& terms)> sums;
    std::function<void(const GradDx& dx)> output;
  };

  // Over memory: a pass for the sums (RowSums), a pass for the output (GradOutput).
  void EmitRowGrad() {
    llvm::IRBuilder<>& b = ec_.b;
    GradPasses p;
    p.first = [&]() {
      // 0 for an empty row, which loads nothing.
      llvm::AllocaInst* slot = ec_.EntryAlloca(ec_.F32(), "first");
      b.CreateStore(llvm::ConstantFP::get(ec_.F32(), 0.0), slot);
      EmitIfElse(ec_, b.CreateICmpSGT(cols_, ec_.I64Const(0)),
                 [&]() { b.CreateStore(XDy(ec_.I64Const(0), 1).first, slot); });
      return b.CreateLoad(ec_.F32(), slot);
    };
    p.sums = [&](int count, const GradTerms& terms) { return RowSums(count, terms); };
    p.output = [&](const GradDx& dx) { GradOutput(dx); };
    EmitRowGrad(p);
  }

  // A short static row (RegisterRowVectors: nv vectors, the last one masked) loaded once: the
  // sums and the output come from registers.
  void EmitRegisterRowGrad(int nv, const std::vector<llvm::Value*>& row) {
    llvm::IRBuilder<>& b = ec_.b;
    const int lanes = ec_.lanes;
    llvm::Value* last_mask = LastVectorMask();
    auto at = [&](int i) { return ec_.I64Const(int64_t{i} * lanes); };
    auto mask_for = [&](int i) { access_.MaskLanes(i == nv - 1 ? last_mask : nullptr); };
    idx_ = row;
    std::vector<llvm::Value*> xs, dys;
    for (int i = 0; i < nv; ++i) {
      mask_for(i);
      auto [x, dy] = XDy(at(i), lanes);
      xs.push_back(x);
      dys.push_back(dy);
    }
    access_.MaskLanes(nullptr);
    GradPasses p;
    p.first = [&]() { return b.CreateExtractElement(xs[0], uint64_t{0}); };
    p.sums = [&](int count, const GradTerms& terms) {
      std::vector<std::vector<llvm::Value*>> per_term(count);
      for (int i = 0; i < nv; ++i) {
        std::vector<llvm::Value*> t = terms(xs[i], dys[i]);
        for (int j = 0; j < count; ++j) {
          per_term[j].push_back(i == nv - 1 ? IdentityOutsideMask(b, Combine::kSum, t[j], last_mask)
                                            : t[j]);
        }
      }
      std::vector<llvm::Value*> sums;
      for (int j = 0; j < count; ++j) sums.push_back(TreeReduce(Combine::kSum, per_term[j]));
      return sums;
    };
    p.output = [&](const GradDx& dx) {
      for (int i = 0; i < nv; ++i) {
        mask_for(i);
        idx_ = row;
        StoreOutput(at(i), lanes, dx(xs[i], dys[i], lanes));
      }
      access_.MaskLanes(nullptr);
    };
    EmitRowGrad(p);
  }

  // The backward ops (x is y for softmax_grad and log_softmax_grad; dy is dy * weight, g, for
  // the norms):
  //   softmax_grad      dx = y * (dy - sum(y * dy))
  //   log_softmax_grad  dx = dy - exp(y) * sum(dy)
  //   layer_norm_grad   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
  //   rms_norm_grad     dx = r * g - x * r^3 * mean(g * x)
  // layer_norm_grad's statistics come from one pass of sums of d = x - x[0] (the row's first
  // element): the mean of d and of d^2 give the variance without the cancellation of raw
  // moments when the row's mean is large against its spread, and mean(g * xhat) is
  // rstd * (mean(g * d) - mean(d) * mean(g)).
  void EmitRowGrad(const GradPasses& p) {
    llvm::IRBuilder<>& b = ec_.b;
    switch (k_.row_op) {
      case ir::RowOpKind::kSoftmaxGrad: {
        llvm::Value* s = p.sums(1, [&](llvm::Value* y, llvm::Value* dy) {
          return std::vector<llvm::Value*>{b.CreateFMul(y, dy)};
        })[0];
        p.output([&](llvm::Value* y, llvm::Value* dy, int w) {
          return b.CreateFMul(y, b.CreateFSub(dy, S(s, w)));
        });
        break;
      }
      case ir::RowOpKind::kLogSoftmaxGrad: {
        llvm::Value* s = p.sums(
            1, [](llvm::Value*, llvm::Value* dy) { return std::vector<llvm::Value*>{dy}; })[0];
        p.output([&](llvm::Value* y, llvm::Value* dy, int w) {
          return b.CreateFSub(dy, b.CreateFMul(EmitExp(b, y), S(s, w)));
        });
        break;
      }
      case ir::RowOpKind::kLayerNormGrad: {
        llvm::Value* shift = p.first();
        const std::vector<llvm::Value*> sums = p.sums(4, [&](llvm::Value* x, llvm::Value* g) {
          const int w = Width(x);
          llvm::Value* d = b.CreateFSub(x, S(shift, w));
          return std::vector<llvm::Value*>{d, b.CreateFMul(d, d), g, b.CreateFMul(g, d)};
        });
        auto mean = [&](llvm::Value* sum) { return b.CreateFDiv(sum, cols_f_); };
        llvm::Value* mean_d = mean(sums[0]);
        llvm::Value* zero = llvm::ConstantFP::get(ec_.F32(), 0.0);
        // The variance, never below 0 (rounding could take it there for a constant row).
        llvm::Value* var =
            EmitMax(b, b.CreateFSub(mean(sums[1]), b.CreateFMul(mean_d, mean_d)), zero);
        llvm::Value* rstd =
            EmitRsqrt(b, b.CreateFAdd(var, llvm::ConstantFP::get(ec_.F32(), k_.eps)));
        llvm::Value* mean_g = mean(sums[2]);
        llvm::Value* mean_gxhat =
            b.CreateFMul(rstd, b.CreateFSub(mean(sums[3]), b.CreateFMul(mean_d, mean_g)));
        p.output([&](llvm::Value* x, llvm::Value* g, int w) {
          llvm::Value* d = b.CreateFSub(b.CreateFSub(x, S(shift, w)), S(mean_d, w));
          llvm::Value* xhat = b.CreateFMul(d, S(rstd, w));
          llvm::Value* inner =
              b.CreateFSub(b.CreateFSub(g, S(mean_g, w)), b.CreateFMul(xhat, S(mean_gxhat, w)));
          return b.CreateFMul(S(rstd, w), inner);
        });
        break;
      }
      case ir::RowOpKind::kRmsNormGrad: {
        const std::vector<llvm::Value*> sums = p.sums(2, [&](llvm::Value* x, llvm::Value* g) {
          return std::vector<llvm::Value*>{b.CreateFMul(x, x), b.CreateFMul(g, x)};
        });
        llvm::Value* r = InvRootMean(sums[0]);
        // c = r^3 * mean(g * x).
        llvm::Value* c =
            b.CreateFMul(b.CreateFMul(b.CreateFMul(r, r), r), b.CreateFDiv(sums[1], cols_f_));
        p.output([&](llvm::Value* x, llvm::Value* g, int w) {
          return b.CreateFSub(b.CreateFMul(S(r, w), g), b.CreateFMul(x, S(c, w)));
        });
        break;
      }
      default:
        break;
    }
  }

  static int Width(llvm::Value* v) {
    auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
    return vt == nullptr ? 1 : static_cast<int>(vt->getNumElements());
  }

  void EmitRow() {
    llvm::IRBuilder<>& b = ec_.b;
    llvm::Value* one = llvm::ConstantFP::get(ec_.F32(), 1.0);
    if (ir::IsRowGrad(k_.row_op)) {
      EmitRowGrad();
      return;
    }
    switch (k_.row_op) {
      case ir::RowOpKind::kSoftmax:
      case ir::RowOpKind::kLogSoftmax: {
        llvm::Value* m = RowReduce(Combine::kRowMax, [](llvm::Value* x, int) { return x; });
        const bool keep = KeepsExp(k_);
        // exp(x - max) is kept in the output, or with streaming stores in the scratch row (so
        // the output is written once, by the final pass, without being read into the cache).
        // The exp pass is the row's long one: the next row streams in during it (against the
        // final pass: 4096x4096 1.07x at 2 threads, 1.09x at 1; Xeon, 2 MiB L2).
        auto keep_exp = [&](llvm::Value* at, int w, llvm::Value* e) {
          if (w > 1) PrefetchNextRow(at, w);
          if (row_scratch_ == nullptr) {
            StoreOutput(at, w, e);
          } else {
            ec_.Check(BoundsChecks::kScratch, at, nullptr, w, access_.lane_mask(), true);
            ec_.StoreLanes(e, KeptAt(at), access_.lane_mask());
          }
        };
        llvm::Value* s = RowReduce(
            Combine::kSum,
            [&](llvm::Value* x, int w) {
              return EmitExp(b, b.CreateFSub(x, S(m, w)), kSoftmaxFlushBelow);
            },
            keep ? keep_exp : std::function<void(llvm::Value*, int, llvm::Value*)>());
        if (keep) {
          // out = e * (1/s): e was stored at exactly these points.
          llvm::Value* inv = b.CreateFDiv(one, s);
          const int out = k_.stores[0].access;
          FinalSpan([&](llvm::Value* at, int w, int) {
            idx_[rank_ - 1] = at;
            if (row_scratch_ != nullptr) {
              ec_.Check(BoundsChecks::kScratch, at, nullptr, w, access_.lane_mask(), false);
            }
            llvm::Value* e = row_scratch_ == nullptr
                                 ? access_.Load(out, idx_, rank_ - 1, w)
                                 : ec_.LoadLanes(ec_.VecType(w), KeptAt(at), access_.lane_mask());
            access_.Store(out, idx_, rank_ - 1, w, b.CreateFMul(e, S(inv, w)));
          });
        } else if (k_.row_op == ir::RowOpKind::kSoftmax) {
          llvm::Value* inv = b.CreateFDiv(one, s);
          Normalize([&](llvm::Value* x, int w) {
            return b.CreateFMul(EmitExp(b, b.CreateFSub(x, S(m, w)), kSoftmaxFlushBelow),
                                S(inv, w));
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
        llvm::Value* rstd = InvRootMean(ss);
        Normalize([&](llvm::Value* x, int w) {
          return b.CreateFMul(b.CreateFSub(x, S(mean, w)), S(rstd, w));
        });
        break;
      }
      case ir::RowOpKind::kRmsNorm: {
        llvm::Value* ss =
            RowReduce(Combine::kSum, [&](llvm::Value* x, int) { return b.CreateFMul(x, x); });
        llvm::Value* rinv = InvRootMean(ss);
        Normalize([&](llvm::Value* x, int w) { return b.CreateFMul(x, S(rinv, w)); });
        break;
      }
      default:  // the backward ops: EmitRowGrad
        break;
    }
  }

  EmitContext& ec_;
  AccessEmitter& access_;
  const ir::Kernel& k_;
  const int rank_;
  int unroll_ = 1;
  bool streaming_ = false;
  llvm::Value* row_scratch_ = nullptr;  // softmax's exp row, when streaming (RowOpScratchBytes)
  std::vector<llvm::Value*> dims_;
  std::vector<int> roots_;
  std::vector<llvm::Value*> idx_;
  std::vector<llvm::Value*> next_idx_;
  llvm::Value* cols_ = nullptr;
  llvm::Value* cols_f_ = nullptr;
};

}  // namespace

int64_t RowOpScratchBytes(const ir::Kernel& k) {
  if (k.kind != ir::KernelKind::kRowOp || !k.config.streaming_stores || !KeepsExp(k) ||
      k.domain.empty() || !k.domain.back().IsConstant()) {
    return 0;
  }
  return k.domain.back().constant() * 4;
}

absl::Status EmitRowOp(EmitContext& ec, AccessEmitter& access) {
  RowOpEmitter(ec, access).Emit();
  return absl::OkStatus();
}

}  // namespace pto::jit
