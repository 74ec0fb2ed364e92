// The reference implementation of every op: plain, obviously correct C++ on HostTensors.
// Tests and the tuner check compiled kernels against it (with ops/tolerance.h).
//
// Arithmetic is done in double and rounded to the result dtype once per output element:
// elementwise ops are correctly rounded (or nearly so for transcendentals), and reductions,
// matmul, softmax and the norms accumulate in double.
//
// Dtypes: a float op takes f32 and f64 tensors (f64, the reference's wide type for gradient
// checks, stands for f32 in InferDType); its result is f64 when any float input is f64, else
// f32, so a graph evaluated on f64 inputs stays in f64 throughout. Data movement (transpose,
// reshape, concat, slice) carries any dtype its inputs share, i32 included. Otherwise an op
// takes the dtypes InferDType accepts. Semantics worth knowing:
// - max/min/relu propagate NaN (like numpy.maximum); relu(x) = max(x, 0).
// - gelu_tanh(x) = 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), gelu_erf(x) =
//   0.5x(1 + erf(x/sqrt(2))), silu(x) = x*sigmoid(x), rsqrt(x) = 1/sqrt(x).
// - Reducing an empty axis gives 0 (sum), -inf (max), NaN (mean), like numpy.
// - softmax and log_softmax subtract the row max first; layer_norm uses two passes (mean,
//   then the biased variance), y = (x-mean)/sqrt(var+eps)*w + b; rms_norm
//   y = x/sqrt(mean(x^2)+eps)*w.
// - cast supports only f32 -> f32 (a copy; f64 stays f64), like InferDType.
#ifndef PTO_OPS_REFERENCE_H_
#define PTO_OPS_REFERENCE_H_

#include <functional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/ir/graph.h"
#include "ops/host_tensor.h"

namespace pto::ops {

// Applies `op` to concrete inputs. The output shape follows InferShape (slices follow numpy:
// negative bounds count from the end, both clamp to the size, step >= 1) and the dtype the
// rules above. InvalidArgument for a shape error, an input whose stored size does not match its
// shape, or op kInput (inputs are bound by RunReference); a dtype InferDType refuses gets its
// status; Unimplemented for a non-f32 cast. `yield`, when set, runs between
// pieces of a long op (a matmul's rows).
absl::StatusOr<HostTensor> EvaluateOp(ir::OpKind op, const ir::Attrs& attrs,
                                      std::span<const HostTensor* const> inputs,
                                      const std::function<void()>& yield = nullptr);

struct ReferenceOptions {
  // Compute in double: f32 inputs are widened to f64 and every f32 node is computed and kept in
  // f64 (so f32 outputs come back as kF64; an f32 constant is its attrs.scalar, not rounded to
  // f32); i32 values stay i32. For gradient checks.
  bool f64 = false;
};

// Runs `graph` on `inputs` (inputs[i] is the Function's input i) and returns its outputs in
// graph.outputs order.
// - Each input's dtype must be its input node's (an f64 tensor is accepted for an f32 node)
//   and its stored size its shape's, else InvalidArgument naming the input.
// - Symbols are bound from the input nodes' shapes: where a dim is exactly one symbol, the
//   symbol takes the tensor's dim; a derived symbol (a slice's start or length on a symbolic
//   dim, ops/derived_symbols.h) is computed from the symbols of its dim. Two different values
//   for one symbol, a value outside the symbol's [min, max], a symbol no input binds, or any
//   input dim (constant or polynomial) that disagrees with the tensor is InvalidArgument
//   naming the inputs involved.
// - Nodes are evaluated in order (kInput takes inputs[attrs.index]; kConstant is a scalar of
//   the node's dtype), and each result's shape must equal the node's shape with the symbols
//   substituted, its dtype the node's (f64 standing for f32).
// - `yield`, when set, runs before each node and inside long ones (background work waits there).
absl::StatusOr<std::vector<HostTensor>> RunReference(const ir::Graph& graph,
                                                     std::span<const HostTensor> inputs,
                                                     const std::function<void()>& yield = nullptr,
                                                     ReferenceOptions options = {});

}  // namespace pto::ops

#endif  // PTO_OPS_REFERENCE_H_
