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

// Zeros of `shape` with `axis` resized to `length`; -1 for a length that is the constant 0.
int ZerosAlong(GraphBuilder& b, ir::Shape shape, int64_t axis, const ir::SymExpr& length) {
  if (length.AsConstant() == 0) return -1;
  shape[axis] = length;
  return b.Filled(0, shape);
}

// Input i's gradient is the cotangent's slice where i was placed. Its bounds are constants
// counted from the front while every input before it has a constant size, and from the back
// (negative, as Python's) while every input after it has: so one run of symbolic sizes is
// fine; only an input with symbolic sizes on both sides has no slice.
void ConcatVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads) {
  const std::vector<int>& in = args.node.inputs;
  const int64_t axis = NormalizedAxis(args.node.attrs.axis, b.shape(in[0]).size());
  const size_t count = in.size();
  std::vector<std::optional<int64_t>> length(count), before(count), after(count);
  for (size_t i = 0; i < count; ++i) length[i] = b.shape(in[i])[axis].AsConstant();
  before[0] = 0;
  for (size_t i = 1; i < count; ++i) {
    if (before[i - 1] && length[i - 1]) before[i] = *before[i - 1] + *length[i - 1];
  }
  after[count - 1] = 0;
  for (size_t i = count - 1; i-- > 0;) {
    if (after[i + 1] && length[i + 1]) after[i] = *after[i + 1] + *length[i + 1];
  }
  for (size_t i = 0; i < count; ++i) {
    if (!args.wanted[i]) continue;
    std::optional<int64_t> start, end;
    if (before[i]) {
      start = *before[i];
    } else if (after[i] && length[i]) {
      start = -(*after[i] + *length[i]);
    }
    if (after[i] && *after[i] == 0) {
      end = std::numeric_limits<int64_t>::max();
    } else if (before[i] && length[i]) {
      end = *before[i] + *length[i];
    } else if (after[i]) {
      end = -*after[i];
    }
    if (!start || !end) {
      b.Fail(absl::UnimplementedError(absl::StrCat(
          "concat: input ", i, " has inputs of symbolic size along axis ", axis,
          " both before and after it; its gradient's slice would have symbolic bounds")));
      return;
    }
    grads[i] = b.Slice(args.cotangent, axis, *start, *end);
  }
}

// The gradient of x[start : start + step * length : step] along `axis` of constant size
// shape[axis]: the cotangent's elements at positions start + j * step, zeros elsewhere. Each
// element becomes a block of `step` (itself at offset start % step, zeros around it), the blocks
// are laid end to end, and zeros before (start - start % step) and after pad them to the size.
int StridedSliceVjp(GraphBuilder& b, int g, const ir::Shape& shape, int64_t axis, int64_t start,
                    int64_t length, int64_t step) {
  const int64_t n = shape[axis].constant(), offset = start % step;
  ir::Shape blocks = b.shape(g);
  blocks.insert(blocks.begin() + axis + 1, ir::SymExpr(1));
  std::vector<int> parts;
  if (int before = ZerosAlong(b, blocks, axis + 1, ir::SymExpr(offset)); before >= 0) {
    parts.push_back(before);
  }
  parts.push_back(b.ReshapeTo(g, blocks));
  if (int after = ZerosAlong(b, blocks, axis + 1, ir::SymExpr(step - offset - 1)); after >= 0) {
    parts.push_back(after);
  }
  ir::Shape laid = b.shape(g);
  laid[axis] = ir::SymExpr(length * step);
  const int grad = b.ReshapeTo(b.Concat(parts, axis + 1), laid);
  const int64_t lead = start - offset;
  const int64_t tail = n - lead - length * step;  // negative when the last block overhangs
  std::vector<int> padded;
  if (int zeros = ZerosAlong(b, shape, axis, ir::SymExpr(lead)); zeros >= 0) {
    padded.push_back(zeros);
  }
  padded.push_back(tail < 0 ? b.Slice(grad, axis, 0, length * step + tail) : grad);
  if (tail > 0) padded.push_back(ZerosAlong(b, shape, axis, ir::SymExpr(tail)));
  return b.Concat(padded, axis);
}

void SliceVjp(GraphBuilder& b, const VjpArgs& args, std::vector<int>& grads) {
  if (!args.wanted[0]) return;
  const ir::Attrs& a = args.node.attrs;
  const ir::Shape shape = b.shape(args.node.inputs[0]);
  const int64_t axis = NormalizedAxis(a.axis, shape.size());
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
    if (!dim.IsConstant()) {
      // Each element back at its source position: the positions are the same slice of an
      // index ramp over the dim, and the cotangent is scatter-added there (no position
      // repeats, so the sum is the element itself).
      ir::Attrs along;
      along.axis = 0;
      const int ramp = b.Op(OpKind::kIota, {b.Filled(0, {dim})}, along);
      const int positions = b.Slice(ramp, 0, a.start, a.end, a.step);
      ir::Attrs scatter;
      scatter.axis = axis;
      grads[0] =
          b.Op(OpKind::kScatterAdd, {args.node.inputs[0], args.cotangent, positions}, scatter);
      return;
    }
    grads[0] = StridedSliceVjp(b, args.cotangent, shape, axis, start.constant(), length.constant(),
                               a.step);
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
