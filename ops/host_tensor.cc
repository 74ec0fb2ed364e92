#include "ops/host_tensor.h"

#include <cassert>
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

int64_t HostTensor::size() const {
  return static_cast<int64_t>(dtype == ir::DType::kF32 ? data.size() : wide.size());
}

void HostTensor::Set(int64_t i, double v) {
  switch (dtype) {
    case ir::DType::kF32:
      data[i] = static_cast<float>(v);
      return;
    case ir::DType::kI32:
      assert(v == std::trunc(v) && v >= std::numeric_limits<int32_t>::min() &&
             v <= std::numeric_limits<int32_t>::max() && "i32 element must be an int32");
      wide[i] = v;
      return;
    default:
      assert(dtype == ir::DType::kF64 && "HostTensor holds f32, f64 or i32");
      wide[i] = v;
      return;
  }
}

std::vector<int32_t> HostTensor::I32Values() const {
  assert(dtype == ir::DType::kI32 && "I32Values of a tensor that is not i32");
  std::vector<int32_t> values(wide.size());
  for (size_t i = 0; i < wide.size(); ++i) values[i] = static_cast<int32_t>(wide[i]);
  return values;
}

HostTensor HostTensor::ToF64() const {
  if (dtype != ir::DType::kF32) return *this;
  HostTensor t{shape, {}, ir::DType::kF64, std::vector<double>(data.begin(), data.end())};
  return t;
}

HostTensor HostTensor::ToF32() const {
  if (dtype != ir::DType::kF64) return *this;
  HostTensor t{shape, std::vector<float>(wide.size())};
  for (size_t i = 0; i < wide.size(); ++i) t.data[i] = static_cast<float>(wide[i]);
  return t;
}

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

HostTensor HostTensor::Zeros(std::vector<int64_t> shape, ir::DType dtype) {
  assert(IsHostDType(dtype) && "HostTensor holds f32, f64 or i32");
  HostTensor t;
  t.shape = std::move(shape);
  t.dtype = dtype;
  if (dtype == ir::DType::kF32) {
    t.data.assign(ops::NumElements(t.shape), 0.0f);
  } else {
    t.wide.assign(ops::NumElements(t.shape), 0.0);
  }
  return t;
}

HostTensor HostTensor::I32(std::vector<int64_t> shape, std::vector<int32_t> values) {
  HostTensor t;
  t.shape = std::move(shape);
  t.dtype = ir::DType::kI32;
  t.wide.assign(values.begin(), values.end());
  return t;
}

bool IsHostDType(ir::DType dtype) {
  return dtype == ir::DType::kF32 || dtype == ir::DType::kF64 || dtype == ir::DType::kI32;
}

bool IsFloatDType(ir::DType dtype) { return dtype == ir::DType::kF32 || dtype == ir::DType::kF64; }

}  // namespace pto::ops
