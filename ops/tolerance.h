// How closely a compiled f32 kernel must match the reference (ops/reference.h), per op.
//
// An element passes when |got - want| <= abs + rel * |want|; NaN must meet NaN and an infinity
// the same infinity. The bounds assume inputs of magnitude <= 1, as the tuner and the op tests
// draw them (HostTensor::Random(shape, seed, -1, 1)): absolute terms that grow with the
// reduction length are sized for that scale. eps below is FLT_EPSILON (2^-23, about 1.19e-7).
#ifndef PTO_OPS_TOLERANCE_H_
#define PTO_OPS_TOLERANCE_H_

#include <cstdint>
#include <span>
#include <string>

#include "jit/ir/graph.h"
#include "ops/host_tensor.h"

namespace pto::ops {

struct Tolerance {
  double abs = 0;
  double rel = 0;
};

// The tolerance of `op`, whose reduction length (the reduced extent for reduce_*, the row
// length for softmax, log_softmax and the norms, K for matmul) is `reduction_length`;
// ignored by the other ops. See tolerance.cc for the reasoning behind each number.
Tolerance OpTolerance(ir::OpKind op, int64_t reduction_length);

// The tolerance of one node: `op` with `attrs` applied to these concrete inputs, its value
// compared with the reference of the op on the same inputs. OpTolerance with the reduction
// length read from the inputs' shapes and its absolute term, sized for operands of magnitude
// <= 1, multiplied by the magnitude of the terms the op combines (at least 1): max|a| * max|b|
// for matmul, the largest weight or bias element for the norms (their output is normalized),
// the largest input element otherwise.
Tolerance NodeTolerance(ir::OpKind op, const ir::Attrs& attrs,
                        std::span<const HostTensor* const> inputs);

// The tolerance of a chain of ops (a fusion group): errors add up to first order.
Tolerance Combine(Tolerance a, Tolerance b);

// True when `got` has `want`'s shape and every element is within `tol`. Elements are read
// through HostTensor::at(), so f32 compares with f64 (a kernel against the reference in f64);
// an i32 tensor compares only with i32. Otherwise, when `first_mismatch` is not null, describes
// the first bad element (flat index, coordinates, both values, the difference and the allowed
// bound, and both dtypes when they differ), the dtype difference or the shape difference.
bool AllClose(const HostTensor& got, const HostTensor& want, Tolerance tol,
              std::string* first_mismatch);

// The largest errors of `got` against `want` over their elements: max_abs of |got - want|,
// max_rel of |got - want| / max(|want|, FLT_MIN). Equal values (NaN and NaN, an infinity and
// itself) differ by 0; a NaN or an infinity against anything else by infinity, as does a shape,
// size or dtype mismatch (dtypes as AllClose compares them: f32 with f64, i32 with i32).
struct ErrorStats {
  double max_abs = 0;
  double max_rel = 0;
};
ErrorStats MaxErrors(const HostTensor& got, const HostTensor& want);

}  // namespace pto::ops

#endif  // PTO_OPS_TOLERANCE_H_
