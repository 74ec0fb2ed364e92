#include "jit/traced_shape_check.h"

#include <cstdint>
#include <optional>

#include "absl/strings/str_cat.h"
#include "pto/tensor.h"

namespace pto::detail {

absl::Status CheckTracedShape(ir::OpKind op, const ir::Shape& shape,
                              std::span<const std::string> symbol_names) {
  if (shape.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(
        absl::StrCat(ir::OpName(op), ": result shape ", ir::ShapeToString(shape, symbol_names),
                     " has rank ", shape.size(), ", above the maximum rank ", kMaxRank));
  }
  int64_t elements = 1;
  for (const ir::SymExpr& dim : shape) {
    const std::optional<int64_t> size = dim.AsConstant();
    if (size.has_value() && *size >= 0 && __builtin_mul_overflow(elements, *size, &elements)) {
      return absl::InvalidArgumentError(absl::StrCat(ir::OpName(op), ": result shape ",
                                                     ir::ShapeToString(shape, symbol_names),
                                                     " has more elements than int64 can count"));
    }
  }
  return absl::OkStatus();
}

}  // namespace pto::detail
