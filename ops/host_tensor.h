// A dense row-major tensor in host memory: the currency of the reference implementation, of the
// op tests and of the tuner's output checks.
//
// Three element types: kF32 (in `data`, the common case, filled by aggregate initialization
// `HostTensor{shape, data}`), and kF64 and kI32 (in `wide`: every int32 is exact in a double).
// kF64 is the reference's wide type for gradient checks. The storage the dtype does not use
// stays empty. at() and Set() read and write any dtype through double.
#ifndef PTO_OPS_HOST_TENSOR_H_
#define PTO_OPS_HOST_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "jit/ir/dtype.h"

namespace pto::ops {

struct HostTensor {
  std::vector<int64_t> shape;  // concrete dims, each >= 0; [] is a scalar
  std::vector<float> data;     // kF32: NumElements(shape) values, row-major
  ir::DType dtype = ir::DType::kF32;
  std::vector<double> wide;  // kF64 and kI32: NumElements(shape) values, row-major

  // Product of the dims (1 for a scalar, 0 when any dim is 0).
  int64_t NumElements() const;
  // Elements stored for the dtype (data.size() for kF32, wide.size() otherwise); equals
  // NumElements() in a well-formed tensor.
  int64_t size() const;
  // Shape rendered like "[2, 3]".
  std::string ShapeString() const;

  // Element i (row-major, 0 <= i < size()) as a double, whatever the dtype.
  double at(int64_t i) const {
    return dtype == ir::DType::kF32 ? static_cast<double>(data[i]) : wide[i];
  }
  // Sets element i to `v` rounded to the dtype: the nearest float for kF32, exact for kF64. For
  // kI32, `v` must be an integer in int32's range (asserted: a caller's broken invariant).
  void Set(int64_t i, double v);

  // The values of a kI32 tensor (asserted).
  std::vector<int32_t> I32Values() const;
  // The same values as kF64 (kF32 widened; kF64 and kI32 returned unchanged).
  HostTensor ToF64() const;
  // The same values as kF32 (kF64 rounded to nearest; kF32 and kI32 returned unchanged).
  HostTensor ToF32() const;

  // Values drawn uniformly from [lo, hi) by a fixed generator (std::mt19937_64 seeded with
  // `seed`, 24 random bits per value): the same seed gives the same tensor on every platform.
  // kF32.
  static HostTensor Random(std::vector<int64_t> shape, uint64_t seed, float lo = -1.0f,
                           float hi = 1.0f);
  // Every element equal to `value`; kF32.
  static HostTensor Filled(std::vector<int64_t> shape, float value);
  // Every element 0, of `dtype`: kF32, kF64 or kI32 (asserted).
  static HostTensor Zeros(std::vector<int64_t> shape, ir::DType dtype);
  // A kI32 tensor; values.size() should be NumElements(shape).
  static HostTensor I32(std::vector<int64_t> shape, std::vector<int32_t> values);
};

// True for the dtypes a HostTensor stores: kF32, kF64 and kI32.
bool IsHostDType(ir::DType dtype);
// True for kF32 and kF64.
bool IsFloatDType(ir::DType dtype);

// Product of `shape` (1 for []); saturates at INT64_MAX so that an absurd shape can never
// match a data size.
int64_t NumElements(const std::vector<int64_t>& shape);

}  // namespace pto::ops

#endif  // PTO_OPS_HOST_TENSOR_H_
