// Reference loops of gather and scatter_add. Both view their value operand as [pre, n, post]
// around `axis` and the indices (i32, any shape) as a flat list of m positions.
#include <cstdint>
#include <limits>
#include <vector>

#include "ops/reference_kernels.h"

namespace pto::ops::internal {
namespace {

struct Split {
  int64_t pre = 1, n = 1, post = 1;
};

Split SplitAt(const Dims& shape, int64_t axis) {
  Split s;
  for (int64_t i = 0; i < axis; ++i) s.pre *= shape[i];
  s.n = shape[axis];
  for (size_t i = axis + 1; i < shape.size(); ++i) s.post *= shape[i];
  return s;
}

}  // namespace

HostTensor Gather(const HostTensor& x, const HostTensor& indices, int64_t axis,
                  const Dims& out_shape) {
  const Split s = SplitAt(x.shape, axis);
  const int64_t m = indices.NumElements();
  return ByStorage(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T>& in = Values<T>(x);
    HostTensor out = Result(out_shape, x.dtype);
    std::vector<T>& y = Values<T>(out);
    y.reserve(NumElements(out_shape));
    for (int64_t p = 0; p < s.pre; ++p) {
      for (int64_t i = 0; i < m; ++i) {
        const int64_t j = static_cast<int64_t>(indices.at(i));
        for (int64_t q = 0; q < s.post; ++q) {
          // An index outside [0, n) (negative ones too: no wrap-around) reads NaN.
          y.push_back(j >= 0 && j < s.n ? in[(p * s.n + j) * s.post + q]
                                        : std::numeric_limits<T>::quiet_NaN());
        }
      }
    }
    return out;
  });
}

HostTensor ScatterAdd(const HostTensor& updates, const HostTensor& indices, int64_t axis,
                      const Dims& out_shape) {
  const Split s = SplitAt(out_shape, axis);
  const int64_t m = indices.NumElements();
  return ByStorage(updates.dtype, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T>& u = Values<T>(updates);
    HostTensor out = Result(out_shape, updates.dtype);
    std::vector<T>& y = Values<T>(out);
    y.assign(NumElements(out_shape), T{0});
    // Each element's sum in the order of the index positions; out-of-range indices dropped.
    for (int64_t p = 0; p < s.pre; ++p) {
      for (int64_t i = 0; i < m; ++i) {
        const int64_t j = static_cast<int64_t>(indices.at(i));
        if (j < 0 || j >= s.n) continue;
        for (int64_t q = 0; q < s.post; ++q) {
          y[(p * s.n + j) * s.post + q] += u[(p * m + i) * s.post + q];
        }
      }
    }
    return out;
  });
}

}  // namespace pto::ops::internal
