#include "jit/numerics/non_finite.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"

namespace pto::jit::numerics {
namespace {

constexpr uint32_t kMagnitude = 0x7fffffffu;  // all bits but the sign
constexpr uint32_t kExponent = 0x7f800000u;   // a magnitude at least this is inf or NaN
constexpr int64_t kBlock = 1024;

// The largest magnitude bit pattern in bits[0, n): plain loop, vectorized by the compiler.
uint32_t MaxMagnitude(const uint32_t* bits, int64_t n) {
  uint32_t m = 0;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, bits[i] & kMagnitude);
  return m;
}

}  // namespace

std::optional<NonFinite> FindNonFinite(const float* data, int64_t count) {
  static_assert(sizeof(float) == sizeof(uint32_t));
  // f32 buffers are 4-byte aligned: reading them as uint32_t is reading their bits.
  const uint32_t* bits = reinterpret_cast<const uint32_t*>(data);
  for (int64_t start = 0; start < count; start += kBlock) {
    const int64_t n = std::min(kBlock, count - start);
    if (MaxMagnitude(bits + start, n) < kExponent) continue;
    for (int64_t i = start; i < start + n; ++i) {
      if ((bits[i] & kMagnitude) >= kExponent) return NonFinite{i, data[i]};
    }
  }
  return std::nullopt;
}

std::string NonFiniteName(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  return absl::StrCat(value);
}

std::string MultiIndexString(int64_t index, std::span<const int64_t> shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] <= 0) continue;
    idx[d] = index % shape[d];
    index /= shape[d];
  }
  std::string out = "[";
  for (size_t d = 0; d < idx.size(); ++d) absl::StrAppend(&out, d ? ", " : "", idx[d]);
  return out + "]";
}

}  // namespace pto::jit::numerics
