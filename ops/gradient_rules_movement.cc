// Gradient rules of the data-movement and indexing ops: the cotangent moved back to where the
// input's elements came from.
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ops/derived_symbols.h"
#include "ops/gradient_rules_internal.h"
#include "ops/shape_rules.h"

namespace pto::ops::internal {
namespace {

using ir::OpKind;

int64_t Axis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

// Zeros of `shape` with `axis` resized to `length`; -1 for a length that is the constant 0.
int ZerosAlong(GraphBuilder& b, ir::Shape shape, int64_t axis, const ir::SymExpr& length) {
  if (length.AsConstant() == 0) return -1;
  shape[axis] = length;
  return b.BroadcastTo(b.Constant(0), shape);
}

void ConcatVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads) {
  const std::vector<int>& in = args.node.inputs;
  const int64_t axis = Axis(args.node.attrs.axis, b.shape(in[0]).size());
  int64_t offset = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const std::optional<int64_t> length = b.shape(in[i])[axis].AsConstant();
    const bool last = i + 1 == in.size();
    if (args.wanted[i]) {
      if (offset < 0) {
        b.Fail(absl::UnimplementedError(absl::StrCat(
            "concat: input ", i, " follows an input of symbolic size along axis ", axis,
            "; its gradient would start at a symbolic offset, which slices cannot express")));
        return;
      }
      const int64_t end = length.has_value() ? offset + *length
                          : last             ? std::numeric_limits<int64_t>::max()
                                             : -1;
      if (end < 0) {
        b.Fail(absl::UnimplementedError(
            absl::StrCat("concat: input ", i, " has a symbolic size along axis ", axis,
                         " and is not the last input; its gradient's end would be symbolic")));
        return;
      }
      grads[i] = b.Slice(args.cotangent, axis, offset, end);
    }
    offset = length.has_value() && offset >= 0 ? offset + *length : -1;
  }
}

void SliceVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads) {
  if (!args.wanted[0]) return;
  const ir::Attrs& a = args.node.attrs;
  const ir::Shape shape = b.shape(args.node.inputs[0]);
  const int64_t axis = Axis(a.axis, shape.size());
  const ir::SymExpr& dim = shape[axis];
  ir::SymExpr start, length;
  if (std::optional<int64_t> n = dim.AsConstant()) {
    const SliceBounds s = ResolveSlice(*n, a.start, a.end, a.step);
    start = ir::SymExpr(s.start);
    length = ir::SymExpr(s.length);
  } else {
    // The same start and length symbols the forward slice made.
    const SymbolicSlice s = ResolveSymbolicSlice(dim, a.start, a.end, a.step, b.graph().symbols);
    start = s.start;
    length = s.length;
  }
  if (a.step != 1 && !(length.IsConstant() && length.constant() <= 1)) {
    b.Fail(absl::UnimplementedError(absl::StrCat("slice: the gradient of a slice with step ",
                                                 a.step, " is not supported yet")));
    return;
  }
  // The cotangent between zeros: [start] zeros, the slice, the rest zeros.
  std::vector<int> parts;
  if (int before = ZerosAlong(b, shape, axis, start); before >= 0) parts.push_back(before);
  parts.push_back(args.cotangent);
  if (int after = ZerosAlong(b, shape, axis, dim - start - length); after >= 0) {
    parts.push_back(after);
  }
  grads[0] = b.Concat(parts, axis);
}

}  // namespace

void MovementVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads) {
  const ir::Node& n = args.node;
  switch (n.op) {
    case OpKind::kTranspose: {
      if (!args.wanted[0]) return;
      std::vector<int64_t> inverse(n.attrs.ints.size());
      for (size_t i = 0; i < inverse.size(); ++i)
        inverse[n.attrs.ints[i]] = static_cast<int64_t>(i);
      grads[0] = b.Transpose(args.cotangent, inverse);
      return;
    }
    case OpKind::kReshape:
      if (args.wanted[0]) grads[0] = b.ReshapeTo(args.cotangent, b.shape(n.inputs[0]));
      return;
    case OpKind::kConcat:
      ConcatVjp(b, args, grads);
      return;
    case OpKind::kSlice:
      SliceVjp(b, args, grads);
      return;
    case OpKind::kGather:  // x[..., indices, ...]: a deterministic scatter-add into x's shape
      if (args.wanted[0]) {
        grads[0] = b.Op(OpKind::kScatterAdd, {n.inputs[0], args.cotangent, n.inputs[1]}, n.attrs);
      }
      return;
    case OpKind::kScatterAdd:  // the updates' gradient gathers the cotangent back
      if (args.wanted[1]) grads[1] = b.Op(OpKind::kGather, {args.cotangent, n.inputs[2]}, n.attrs);
      return;
    default:
      return;
  }
}

}  // namespace pto::ops::internal
