#include "ops/host_tensor.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pto::ops {

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d == 0) return 0;
  }
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  }
  return n;
}

int64_t HostTensor::NumElements() const { return ops::NumElements(shape); }

std::string HostTensor::ShapeString() const {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

HostTensor HostTensor::Random(std::vector<int64_t> shape, uint64_t seed, float lo, float hi) {
  HostTensor t;
  t.shape = std::move(shape);
  t.data.resize(ops::NumElements(t.shape));
  std::mt19937_64 gen(seed);
  // Not std::uniform_real_distribution: its output differs between standard libraries.
  const double scale = static_cast<double>(hi) - static_cast<double>(lo);
  for (float& v : t.data) {
    const double u = static_cast<double>(gen() >> 40) * 0x1p-24;  // [0, 1), 24 bits
    v = static_cast<float>(lo + scale * u);
    if (v >= hi && hi > lo) v = std::nextafter(hi, lo);  // rounding may reach hi
  }
  return t;
}

HostTensor HostTensor::Filled(std::vector<int64_t> shape, float value) {
  HostTensor t;
  t.shape = std::move(shape);
  t.data.assign(ops::NumElements(t.shape), value);
  return t;
}

}  // namespace pto::ops
