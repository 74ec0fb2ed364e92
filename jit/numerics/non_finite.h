// Finding the first NaN or infinity in an f32 buffer, and naming it for messages.
#ifndef PTO_JIT_NUMERICS_NON_FINITE_H_
#define PTO_JIT_NUMERICS_NON_FINITE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace pto::jit::numerics {

struct NonFinite {
  int64_t index = 0;  // flat, row-major
  float value = 0;
};

// The first element of data[0, count) that is NaN or +-infinity; nullopt if all are finite.
// Scans in blocks the compiler vectorizes, looking for the element itself only in a block that
// holds one.
std::optional<NonFinite> FindNonFinite(const float* data, int64_t count);

// "nan", "inf" or "-inf".
std::string NonFiniteName(float value);

// The flat index `index` of a row-major tensor of `shape` as "[i, j, ...]" ("[]" for a scalar).
std::string MultiIndexString(int64_t index, std::span<const int64_t> shape);

}  // namespace pto::jit::numerics

#endif  // PTO_JIT_NUMERICS_NON_FINITE_H_
