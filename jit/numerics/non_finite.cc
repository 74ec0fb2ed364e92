#include "jit/numerics/non_finite.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"

namespace pto::jit::numerics {
namespace {

constexpr uint32_t kMagnitude = 0x7fffffffu;  // all bits but the sign
constexpr int32_t kMaxFinite = 0x7f7fffff;    // the largest finite magnitude's bits
constexpr int64_t kBlock = 1024;

// Whether bits[0, n) holds a NaN or infinity: a plain loop of signed compares (the magnitude
// fits in 31 bits) ORed together, which the compiler vectorizes with SSE2 already.
bool AnyNonFinite(const uint32_t* bits, int64_t n) {
  uint32_t any = 0;
  for (int64_t i = 0; i < n; ++i) {
    any |= static_cast<uint32_t>(static_cast<int32_t>(bits[i] & kMagnitude) > kMaxFinite);
  }
  return any != 0;
}

}  // namespace

std::optional<NonFinite> FindNonFinite(const float* data, int64_t count) {
  static_assert(sizeof(float) == sizeof(uint32_t));
  // f32 buffers are 4-byte aligned: reading them as uint32_t is reading their bits.
  const uint32_t* bits = reinterpret_cast<const uint32_t*>(data);
  for (int64_t start = 0; start < count; start += kBlock) {
    const int64_t n = std::min(kBlock, count - start);
    if (!AnyNonFinite(bits + start, n)) continue;
    for (int64_t i = start; i < start + n; ++i) {
      if (static_cast<int32_t>(bits[i] & kMagnitude) > kMaxFinite) return NonFinite{i, data[i]};
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
