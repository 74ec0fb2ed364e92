// Shape rules of the data-movement ops: transpose, reshape, concat, slice.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/derived_symbols.h"
#include "ops/shape_rules.h"
#include "ops/shape_rules_internal.h"

namespace pto::ops {

SliceBounds ResolveSlice(int64_t dim, int64_t start, int64_t end, int64_t step) {
  auto clamp = [dim](int64_t v) {
    if (v < 0) v = v < -dim ? 0 : v + dim;
    return std::min(v, dim);
  };
  const int64_t s = clamp(start), e = clamp(end);
  if (e <= s || step <= 0) return {s, 0};
  return {s, 1 + (e - s - 1) / step};
}

namespace internal {
namespace {

std::string Spec(const std::vector<int64_t>& ints) {
  return absl::StrCat("[", absl::StrJoin(ints, ", "), "]");
}

}  // namespace

absl::StatusOr<ir::Shape> TransposeShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                         const ir::Shape& x) {
  const int64_t rank = static_cast<int64_t>(x.size());
  auto fail = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.op, ": permutation ", Spec(attrs.ints),
                                                   " for input 0 shape ", ctx.Shape(x), " ", why));
  };
  if (static_cast<int64_t>(attrs.ints.size()) != rank) {
    return fail(absl::StrCat("has ", attrs.ints.size(), " entries; expected ", rank));
  }
  std::vector<bool> seen(x.size(), false);
  ir::Shape out;
  for (int64_t p : attrs.ints) {
    if (p < 0 || p >= rank) return fail(absl::StrCat("has entry ", p, " outside [0, ", rank, ")"));
    if (seen[p]) return fail(absl::StrCat("repeats axis ", p));
    seen[p] = true;
    out.push_back(x[p]);
  }
  return out;
}

absl::StatusOr<ir::Shape> ReshapeShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                       const ir::Shape& x) {
  auto fail = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(ctx.op, ": spec ", Spec(attrs.ints),
                                                   " for input 0 shape ", ctx.Shape(x), " ", why));
  };
  if (attrs.ints.empty() && !attrs.shape.empty()) {  // a symbolic target
    if (ir::NumElements(attrs.shape) != ir::NumElements(x)) {
      return absl::InvalidArgumentError(absl::StrCat(
          ctx.op, ": target shape ", ctx.Shape(attrs.shape), " has ",
          ctx.Dim(ir::NumElements(attrs.shape)), " elements but input 0 shape ", ctx.Shape(x),
          " has ", ctx.Dim(ir::NumElements(x))));
    }
    return attrs.shape;
  }
  ir::Shape out;
  ir::SymExpr known(1);
  int64_t known_constant = 1;  // the constant entries' product, checked for overflow
  int infer_at = -1;
  for (size_t i = 0; i < attrs.ints.size(); ++i) {
    const int64_t v = attrs.ints[i];
    if (v == -1) {
      if (infer_at >= 0) return fail("has more than one -1");
      infer_at = static_cast<int>(i);
      out.push_back(ir::SymExpr(0));  // placeholder
      continue;
    }
    if (v < -1) {
      return fail(absl::StrCat("has invalid entry ", v, " at position ", i,
                               " (expected a size > 0, 0 to copy the input dim, or -1)"));
    }
    if (v == 0 && i >= x.size()) {
      return fail(absl::StrCat("copies input dim ", i, " (entry 0 at position ", i,
                               ") but the input has rank ", x.size()));
    }
    out.push_back(v == 0 ? x[i] : ir::SymExpr(v));
    if (__builtin_mul_overflow(known_constant, out.back().AsConstant().value_or(1),
                               &known_constant)) {
      return fail("asks for more elements than int64 can count");
    }
    known = known * out.back();
  }
  const ir::SymExpr count = ir::NumElements(x);
  if (infer_at >= 0) {
    if (known.AsConstant() == 0) {
      return fail("cannot infer -1: the other sizes multiply to 0, so any size would fit");
    }
    std::optional<ir::SymExpr> q = count.DivExact(known);
    if (!q.has_value()) {
      return fail(absl::StrCat("cannot infer -1: the input's ", ctx.Dim(count),
                               " elements are not exactly divisible by ", ctx.Dim(known)));
    }
    if (ctx.guards != nullptr && ctx.symbols != nullptr && !known.IsConstant() &&
        RangeOfDim(known, *ctx.symbols).lo < 1) {
      ctx.guards->push_back(
          {known, std::string(fail(absl::StrCat("cannot infer -1 when ", ctx.Dim(known),
                                                " is 0, since any size would fit"))
                                  .message())});
    }
    out[infer_at] = *q;
    return out;
  }
  if (known != count) {
    return fail(absl::StrCat("asks for ", ctx.Dim(known), " elements (shape ", ctx.Shape(out),
                             ") but the input has ", ctx.Dim(count)));
  }
  return out;
}

absl::StatusOr<ir::Shape> ConcatShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                      std::span<const ir::Shape> inputs) {
  const ir::Shape& first = inputs[0];
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx, attrs.axis, 0, first);
  if (!axis.ok()) return axis.status();
  ir::Shape out = first;
  for (size_t i = 1; i < inputs.size(); ++i) {
    const ir::Shape& in = inputs[i];
    if (in.size() != first.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(ctx.op, ": input ", i, " shape ", ctx.Shape(in), " has rank ", in.size(),
                       " but input 0 shape ", ctx.Shape(first), " has rank ", first.size()));
    }
    for (size_t d = 0; d < in.size(); ++d) {
      if (static_cast<int64_t>(d) == *axis) continue;
      if (in[d] != first[d]) {
        return absl::InvalidArgumentError(absl::StrCat(
            ctx.op, ": input ", i, " shape ", ctx.Shape(in), " does not match input 0 shape ",
            ctx.Shape(first), " at axis ", d, " (", ctx.Dim(in[d]), " vs ", ctx.Dim(first[d]),
            "); only the concat axis ", *axis, " may differ"));
      }
    }
    out[*axis] = out[*axis] + in[*axis];
  }
  return out;
}

absl::StatusOr<ir::Shape> SliceShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                     const ir::Shape& x) {
  absl::StatusOr<int64_t> axis = NormalizeAxis(ctx, attrs.axis, 0, x);
  if (!axis.ok()) return axis.status();
  const int64_t start = attrs.start, end = attrs.end, step = attrs.step;
  const ir::SymExpr& dim = x[*axis];
  auto fail = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(
        ctx.op, ": start ", start, ", end ",
        end == std::numeric_limits<int64_t>::max() ? std::string("INT64_MAX (to the end)")
                                                   : absl::StrCat(end),
        ", step ", step, " on axis ", *axis, " of input 0 shape ", ctx.Shape(x), ": ", why));
  };
  if (step <= 0) return fail("step must be >= 1");
  ir::Shape out = x;
  if (std::optional<int64_t> c = dim.AsConstant()) {
    out[*axis] = ResolveSlice(*c, start, end, step).length;
    return out;
  }
  if (ctx.symbols == nullptr) {
    return absl::InternalError(
        absl::StrCat(ctx.op, ": slicing the symbolic dim ", ctx.Dim(dim),
                     " needs the graph's symbol table (InferShape was called without one)"));
  }
  out[*axis] = ResolveSymbolicSlice(dim, start, end, step, *ctx.symbols).length;
  return out;
}

}  // namespace internal
}  // namespace pto::ops
