// A dense row-major f32 tensor in host memory: the currency of the reference implementation,
// of the op tests and of the tuner's output checks.
#ifndef PTO_OPS_HOST_TENSOR_H_
#define PTO_OPS_HOST_TENSOR_H_

#include <cstdint>
#include <string>
#include <vector>

namespace pto::ops {

struct HostTensor {
  std::vector<int64_t> shape;  // concrete dims, each >= 0; [] is a scalar
  std::vector<float> data;     // NumElements(shape) values, row-major

  // Product of the dims (1 for a scalar, 0 when any dim is 0).
  int64_t NumElements() const;
  // Shape rendered like "[2, 3]".
  std::string ShapeString() const;

  // Values drawn uniformly from [lo, hi) by a fixed generator (std::mt19937_64 seeded with
  // `seed`, 24 random bits per value): the same seed gives the same tensor on every platform.
  static HostTensor Random(std::vector<int64_t> shape, uint64_t seed, float lo = -1.0f,
                           float hi = 1.0f);
  // Every element equal to `value`.
  static HostTensor Filled(std::vector<int64_t> shape, float value);
};

// Product of `shape` (1 for []); saturates at INT64_MAX so that an absurd shape can never
// match a data size.
int64_t NumElements(const std::vector<int64_t>& shape);

}  // namespace pto::ops

#endif  // PTO_OPS_HOST_TENSOR_H_
