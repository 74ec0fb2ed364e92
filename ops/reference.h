// The reference implementation of every op: plain, obviously correct C++ on HostTensors.
// Tests and the tuner check compiled kernels against it (with ops/tolerance.h).
//
// Arithmetic is done in double and rounded to f32 once per output element: elementwise ops
// are correctly rounded (or nearly so for transcendentals), and reductions, matmul, softmax
// and the norms accumulate in double. Semantics worth knowing:
// - max/min/relu propagate NaN (like numpy.maximum); relu(x) = max(x, 0).
// - gelu_tanh(x) = 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), gelu_erf(x) =
//   0.5x(1 + erf(x/sqrt(2))), silu(x) = x*sigmoid(x), rsqrt(x) = 1/sqrt(x).
// - Reducing an empty axis gives 0 (sum), -inf (max), NaN (mean), like numpy.
// - softmax and log_softmax subtract the row max first; layer_norm uses two passes (mean,
//   then the biased variance), y = (x-mean)/sqrt(var+eps)*w + b; rms_norm
//   y = x/sqrt(mean(x^2)+eps)*w.
// - cast supports only f32 -> f32 (a copy), like InferDType.
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
// negative bounds count from the end, both clamp to the size, step >= 1). InvalidArgument for
// a shape error, an input whose data size does not match its shape, or op kInput (inputs are
// bound by RunReference); Unimplemented for a non-f32 cast. `yield`, when set, runs between
// pieces of a long op (a matmul's rows).
absl::StatusOr<HostTensor> EvaluateOp(ir::OpKind op, const ir::Attrs& attrs,
                                      std::span<const HostTensor* const> inputs,
                                      const std::function<void()>& yield = nullptr);

// Runs `graph` on `inputs` (inputs[i] is the Function's input i) and returns its outputs in
// graph.outputs order.
// - Symbols are bound from the input nodes' shapes: where a dim is exactly one symbol, the
//   symbol takes the tensor's dim; a derived symbol (a slice's start or length on a symbolic
//   dim, ops/derived_symbols.h) is computed from the symbols of its dim. Two different values
//   for one symbol, a value outside the symbol's [min, max], a symbol no input binds, or any
//   input dim (constant or polynomial) that disagrees with the tensor is InvalidArgument
//   naming the inputs involved.
// - Nodes are evaluated in order (kInput takes inputs[attrs.index]; kConstant is a scalar),
//   and each result's shape must equal the node's shape with the symbols substituted.
// - `yield`, when set, runs before each node and inside long ones (background work waits there).
absl::StatusOr<std::vector<HostTensor>> RunReference(const ir::Graph& graph,
                                                     std::span<const HostTensor> inputs,
                                                     const std::function<void()>& yield = nullptr);

}  // namespace pto::ops

#endif  // PTO_OPS_REFERENCE_H_
