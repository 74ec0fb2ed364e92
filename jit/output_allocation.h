// The allocating call's outputs: their shapes evaluated at the call's symbol values, and the
// tensors allocated for them, each failure with its real reason (the rank limit, an element
// count int64 cannot hold, a size pto does not allocate, memory refused).
#ifndef PTO_JIT_OUTPUT_ALLOCATION_H_
#define PTO_JIT_OUTPUT_ALLOCATION_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/ir/graph.h"
#include "pto/tensor.h"

namespace pto::detail {

// The shapes of `graph`'s outputs with symbol s bound to values[s]. InvalidArgument when a
// dim overflows int64 on the way, or a shape has more than kMaxRank dims or more elements than
// int64 can count, naming the output and its shape.
absl::StatusOr<std::vector<std::vector<int64_t>>> EvaluateOutputShapes(
    const ir::Graph& graph, std::span<const int64_t> values);

// One dense Tensor per shape (checked as above), of dtypes[o] (f32 where `dtypes` is shorter).
// ResourceExhausted, with the bytes and the shape, for a tensor above Tensor::Allocate's limit
// or one the allocator refuses. Output o with a non-null in_place[o] (an output written in
// place of that input) is a Tensor over that view's memory, not owning it.
absl::StatusOr<std::vector<Tensor>> AllocateOutputs(const std::vector<std::vector<int64_t>>& shapes,
                                                    std::span<const DType> dtypes = {},
                                                    const std::vector<const TensorView*>& in_place = {});

}  // namespace pto::detail

#endif  // PTO_JIT_OUTPUT_ALLOCATION_H_
