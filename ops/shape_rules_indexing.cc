// Shape rules of comparisons, where, iota, one_hot, gather and scatter_add.
#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ops/shape_rules_internal.h"

namespace pto::ops::internal {

// The condition with a, then b with both: a conflict with b names the input it conflicts with
// (the broadcast dim came from one of them).
absl::StatusOr<ir::Shape> WhereShape(const RuleContext& ctx, std::span<const ir::Shape> in) {
  absl::StatusOr<ir::Shape> cond_a = Broadcast(ctx, in[0], 0, in[1], 1, "axis");
  if (!cond_a.ok()) return cond_a.status();
  absl::StatusOr<ir::Shape> out = Broadcast(ctx, *cond_a, 0, in[2], 2, "axis");
  if (out.ok()) return out;
  for (int i = 0; i <= 1; ++i) {
    absl::StatusOr<ir::Shape> with = Broadcast(ctx, in[i], i, in[2], 2, "axis");
    if (!with.ok()) return with.status();
  }
  return out.status();
}

absl::StatusOr<ir::Shape> IotaShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                    const ir::Shape& like) {
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx, attrs.axis, 0, like);
  if (!axis.ok()) return axis.status();
  return like;
}

absl::StatusOr<ir::Shape> OneHotShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                      const ir::Shape& indices) {
  if (attrs.ints.size() != 1 || attrs.ints[0] < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(ctx.op, ": depth must be one constant >= 1, got ",
                     attrs.ints.size() == 1 ? absl::StrCat(attrs.ints[0])
                                            : absl::StrCat(attrs.ints.size(), " values")));
  }
  ir::Shape out = indices;
  out.push_back(ir::SymExpr(attrs.ints[0]));
  return out;
}

// x [pre..., n, post...] gathered by indices I along `axis`: [pre..., I..., post...]. (The
// tracer's limits refuse a result of more than kMaxRank dims, as for every node.)
absl::StatusOr<ir::Shape> GatherShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                      const ir::Shape& x, const ir::Shape& indices) {
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx, attrs.axis, 0, x);
  if (!axis.ok()) return axis.status();
  ir::Shape out(x.begin(), x.begin() + *axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), x.begin() + *axis + 1, x.end());
  return out;
}

// like [pre..., n, post...] (only its shape), updates [pre..., I..., post...], indices I.
absl::StatusOr<ir::Shape> ScatterAddShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                          std::span<const ir::Shape> in) {
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx, attrs.axis, 0, in[0]);
  if (!axis.ok()) return axis.status();
  ir::Shape want(in[0].begin(), in[0].begin() + *axis);
  want.insert(want.end(), in[2].begin(), in[2].end());
  want.insert(want.end(), in[0].begin() + *axis + 1, in[0].end());
  if (in[1] != want) {
    return absl::InvalidArgumentError(absl::StrCat(
        ctx.op, ": input 1 (updates) shape ", ctx.Shape(in[1]), " must be input 0 shape ",
        ctx.Shape(in[0]), " with axis ", *axis, " replaced by input 2 (indices) shape ",
        ctx.Shape(in[2]), ": ", ctx.Shape(want)));
  }
  return in[0];
}

}  // namespace pto::ops::internal
