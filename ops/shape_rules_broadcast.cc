// Axis normalization, numpy broadcasting and the matmul rule (batch dims broadcast).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ops/shape_rules_internal.h"

namespace pto::ops::internal {
namespace {

bool IsOne(const ir::SymExpr& d) { return d.AsConstant() == 1; }

}  // namespace

absl::StatusOr<int64_t> NormalizeAxis(const RuleContext& ctx, int64_t axis, int input,
                                      const ir::Shape& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (axis >= -rank && axis < rank) return axis < 0 ? axis + rank : axis;
  return absl::InvalidArgumentError(absl::StrCat(
      ctx.op, ": axis ", axis, " is out of range for input ", input, " shape ", ctx.Shape(shape),
      " (rank ", rank, ": expected ", -rank, " <= axis < ", rank, ")"));
}

absl::StatusOr<ir::Shape> Broadcast(const RuleContext& ctx, const ir::Shape& a, int a_index,
                                    const ir::Shape& b, int b_index, const char* axis_label) {
  const size_t rank = std::max(a.size(), b.size());
  ir::Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {  // i counts axes from the right
    const bool has_a = i < a.size(), has_b = i < b.size();
    const ir::SymExpr da = has_a ? a[a.size() - 1 - i] : ir::SymExpr(1);
    const ir::SymExpr db = has_b ? b[b.size() - 1 - i] : ir::SymExpr(1);
    ir::SymExpr& o = out[rank - 1 - i];
    if (da == db || IsOne(db)) {
      o = da;
    } else if (IsOne(da)) {
      o = db;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx.op, ": input ", b_index, " shape ", ctx.Shape(b),
                       " is not broadcastable with input ", a_index, " shape ", ctx.Shape(a), " (",
                       axis_label, " ", rank - 1 - i, ": ", ctx.Dim(db), " vs ", ctx.Dim(da), ")"));
    }
  }
  return out;
}

absl::StatusOr<ir::Shape> MatMulShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                      const ir::Shape& a, const ir::Shape& b) {
  const ir::Shape* operands[2] = {&a, &b};
  for (int i = 0; i < 2; ++i) {
    if (operands[i]->size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat(ctx.op, ": input ", i, " shape ",
                                                     ctx.Shape(*operands[i]), " has rank ",
                                                     operands[i]->size(), "; expected rank >= 2"));
    }
  }
  const size_t ra = a.size(), rb = b.size();
  // Logical [..., M, K] and [..., K, N]: positions of M, K (in a) and K, N (in b).
  const size_t a_m = attrs.transpose_a ? ra - 1 : ra - 2;
  const size_t a_k = attrs.transpose_a ? ra - 2 : ra - 1;
  const size_t b_k = attrs.transpose_b ? rb - 1 : rb - 2;
  const size_t b_n = attrs.transpose_b ? rb - 2 : rb - 1;
  if (a[a_k] != b[b_k]) {
    return absl::InvalidArgumentError(absl::StrCat(
        ctx.op, ": input 1 shape ", ctx.Shape(b), " has K = ", ctx.Dim(b[b_k]), " (axis ", b_k,
        attrs.transpose_b ? ", transposed" : "", ") but input 0 shape ", ctx.Shape(a), " has K = ",
        ctx.Dim(a[a_k]), " (axis ", a_k, attrs.transpose_a ? ", transposed" : "", ")"));
  }
  const ir::Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  absl::StatusOr<ir::Shape> batch = Broadcast(ctx, batch_a, 0, batch_b, 1, "batch axis");
  if (!batch.ok()) {
    // Re-render with the full shapes: the batch-only shapes would confuse the reader.
    const ir::Shape& longer = batch_a.size() >= batch_b.size() ? batch_a : batch_b;
    size_t axis = 0;
    for (; axis < longer.size(); ++axis) {
      const size_t from_right = longer.size() - 1 - axis;
      const ir::SymExpr da =
          from_right < batch_a.size() ? batch_a[batch_a.size() - 1 - from_right] : 1;
      const ir::SymExpr db =
          from_right < batch_b.size() ? batch_b[batch_b.size() - 1 - from_right] : 1;
      if (da != db && !IsOne(da) && !IsOne(db)) {
        return absl::InvalidArgumentError(
            absl::StrCat(ctx.op, ": input 1 shape ", ctx.Shape(b),
                         " has batch dims not broadcastable with input 0 shape ", ctx.Shape(a),
                         " (batch axis ", axis, ": ", ctx.Dim(db), " vs ", ctx.Dim(da), ")"));
      }
    }
    return batch.status();
  }
  ir::Shape out = *std::move(batch);
  out.push_back(a[a_m]);
  out.push_back(b[b_n]);
  return out;
}

absl::StatusOr<ir::Shape> BroadcastToShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                           const ir::Shape& x) {
  auto fail = [&] {
    return absl::InvalidArgumentError(absl::StrCat(ctx.op, ": input 0 shape ", ctx.Shape(x),
                                                   " does not broadcast to ",
                                                   ctx.Shape(attrs.shape)));
  };
  if (x.size() > attrs.shape.size()) return fail();
  const size_t lead = attrs.shape.size() - x.size();
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] != attrs.shape[lead + i] && !IsOne(x[i])) return fail();
  }
  return attrs.shape;
}

}  // namespace pto::ops::internal
