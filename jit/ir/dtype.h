// Element types. Only kF32 is compiled today; the dtype is part of every signature and key so
// that bf16, f16 and int8 can follow without a redesign. kF64 is the reference
// implementation's wide type for gradient checks (central finite differences need double): it is
// never traced, never compiled and not in the GraphDef proto.
#ifndef PTO_JIT_IR_DTYPE_H_
#define PTO_JIT_IR_DTYPE_H_

#include <cstdint>
#include <string_view>

namespace pto::ir {

enum class DType : uint8_t { kF32 = 0, kF16 = 1, kBF16 = 2, kI8 = 3, kI32 = 4, kF64 = 5 };

constexpr std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI8: return "i8";
    case DType::kI32: return "i32";
    case DType::kF64: return "f64";
  }
  return "?";
}

}  // namespace pto::ir

#endif  // PTO_JIT_IR_DTYPE_H_
