#include "ops/shape_guards.h"

#include "absl/strings/str_cat.h"

namespace pto::ops {

absl::Status CheckShapeGuards(std::span<const ir::ShapeGuard> guards,
                              std::span<const int64_t> values) {
  for (const ir::ShapeGuard& g : guards) {
    const int64_t v = g.expr.Evaluate(values);
    if (v < 1) {
      return absl::InvalidArgumentError(absl::StrCat(g.message, " (it is ", v, " at this call)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace pto::ops
