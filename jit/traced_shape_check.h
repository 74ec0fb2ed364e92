// Limits every traced value's shape keeps, checked as each op is recorded (after its shape
// rule): at most kMaxRank dims, the most a TensorView holds, so every result can be passed in
// and out; and constant dims whose product int64 can count. A program breaking them fails at
// its first call with InvalidArgument naming the op and the shape, not later at allocation.
#ifndef PTO_JIT_TRACED_SHAPE_CHECK_H_
#define PTO_JIT_TRACED_SHAPE_CHECK_H_

#include <span>
#include <string>

#include "absl/status/status.h"
#include "jit/ir/graph.h"

namespace pto::detail {

absl::Status CheckTracedShape(ir::OpKind op, const ir::Shape& shape,
                              std::span<const std::string> symbol_names);

}  // namespace pto::detail

#endif  // PTO_JIT_TRACED_SHAPE_CHECK_H_
