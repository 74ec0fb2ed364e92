// Shape rules of comparisons, where, iota and one_hot.
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

}  // namespace pto::ops::internal
