// Shape and dtype rules of every op in the catalogue (ir::OpKind). Shapes are symbolic
// (ir::SymExpr polynomials over the graph's symbols); a concrete shape is a shape whose dims
// are all constants, so the same rules serve the tracer and the reference implementation.
//
// User mistakes return InvalidArgument with a message that names the op, the input position
// and the shapes involved, e.g.
//   add: input 1 shape [batch, 512] is not broadcastable with input 0 shape [batch, 768]
//   (axis 1: 512 vs 768)
#ifndef PTO_OPS_SHAPE_RULES_H_
#define PTO_OPS_SHAPE_RULES_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jit/ir/dtype.h"
#include "jit/ir/graph.h"
#include "jit/ir/sym_expr.h"

namespace pto::ops {

// Checks the number of inputs of `op`: 0 for input/constant, 1 for unary, cast, reductions,
// softmax, log_softmax, transpose, reshape, slice; 2 for binary ops, rms_norm and matmul;
// 3 for layer_norm; at least 1 for concat.
absl::Status CheckArity(ir::OpKind op, size_t num_inputs);

// The output shape of `op` applied to inputs of shapes `inputs`. `symbols` is the graph's
// symbol table (by symbol id): its names render shapes in error messages, and the slice rule
// appends the derived symbols it needs. It may be null for concrete shapes (then a slice of a
// symbolic dim is an Internal error). `guards`, when not null, receives the conditions a
// symbolic shape was accepted under (ir::ShapeGuard: a reshape's -1 inferred by dividing by
// dims that may be 0); calls check them (ops/shape_guards.h).
//
// Rules:
// - constant: []. input: no rule (its shape comes from the signature): InvalidArgument.
// - binary elementwise: numpy broadcasting; per axis (aligned from the right) the dims must be
//   equal polynomials or one of them the constant 1.
// - unary elementwise, cast, softmax, log_softmax (rank >= 1): the input shape.
// - reduce_*: attrs.axis in [-rank, rank); the axis is removed, or kept as 1 with keepdims.
// - layer_norm(x, w, b), rms_norm(x, w): rank(x) >= 1; w and b have shape [L], L = last dim
//   of x; the result has x's shape.
// - matmul: ranks >= 2; [..., M, K] x [..., K, N] -> [broadcast(...), M, N] where
//   transpose_a/transpose_b mean the operand is stored with its last two axes swapped.
//   K must be the same polynomial (no broadcasting of K).
// - transpose: attrs.ints is a permutation p of [0, rank); out[i] = in[p[i]].
// - reshape: attrs.ints: positive sizes, 0 = copy input dim i, at most one -1 (inferred by
//   exact polynomial division); element counts must be equal polynomials. Like numpy, a -1
//   cannot be inferred when the other sizes multiply to 0 (any size would fit): an error for
//   constant sizes, a guard for symbolic ones that may be 0.
// - concat: attrs.axis in [-rank, rank); same rank and equal dims except on the axis (summed).
// - slice: attrs.axis in [-rank, rank), attrs.start, attrs.end, attrs.step >= 1 on that axis
//   (end == INT64_MAX means "to the end"), numpy's semantics: a negative start or end counts
//   from the end, both clamp to [0, dim], the length is ceil((end - start) / step) or 0. On a
//   constant dim the length is a constant (ResolveSlice); on a symbolic dim it is computed
//   from the dim's runtime size: a polynomial where no clamping can occur over the symbols'
//   ranges, else a derived symbol (ops/derived_symbols.h).
// Since symbols are never negative and equal dims are equal polynomials, a shape accepted here
// stays valid for every value of its symbols, except where a guard says otherwise.
absl::StatusOr<ir::Shape> InferShape(ir::OpKind op, const ir::Attrs& attrs,
                                     std::span<const ir::Shape> inputs,
                                     std::vector<ir::SymbolInfo>* symbols = nullptr,
                                     std::vector<ir::ShapeGuard>* guards = nullptr);

// The output dtype. All inputs must share one dtype (InvalidArgument otherwise), except that
// cast's result is attrs.dtype. Only f32 is supported today: any other dtype among the inputs
// or as cast's target is Unimplemented, naming the op. constant is f32; input has no rule.
absl::StatusOr<ir::DType> InferDType(ir::OpKind op, const ir::Attrs& attrs,
                                     std::span<const ir::DType> inputs);

// An axis in [-rank, rank) (checked by the rules) counted from 0: a negative axis counts from
// the end.
inline int64_t NormalizedAxis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

// A slice [start, end) with step on an axis of constant length `dim`, resolved like numpy:
// negative start/end count from the end, then both are clamped to [0, dim]. step must be >= 1
// (the length is 0 otherwise).
struct SliceBounds {
  int64_t start = 0;   // first element taken, in [0, dim]
  int64_t length = 0;  // number of elements taken
};
SliceBounds ResolveSlice(int64_t dim, int64_t start, int64_t end, int64_t step);

}  // namespace pto::ops

#endif  // PTO_OPS_SHAPE_RULES_H_
