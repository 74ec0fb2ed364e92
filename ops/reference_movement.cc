// Reference loops of the data-movement ops: transpose, broadcast_to, concat, slice (reshape is
// a copy). They move elements of any dtype unchanged.
#include <cstdint>
#include <vector>

#include "ops/reference_kernels.h"

namespace pto::ops::internal {

namespace {

// x read through `strides` (one per axis of out_shape) at every index of out_shape.
HostTensor StridedCopy(const HostTensor& x, const Dims& strides, const Dims& out_shape) {
  return ByStorage(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T>& in = Values<T>(x);
    HostTensor out = Result(out_shape, x.dtype);
    std::vector<T>& y = Values<T>(out);
    y.reserve(NumElements(out_shape));
    std::vector<int64_t> offsets;
    ForEachIndex(out_shape, std::span<const Dims>(&strides, 1), offsets,
                 [&](const std::vector<int64_t>& off) { y.push_back(in[off[0]]); });
    return out;
  });
}

}  // namespace

HostTensor Transpose(const HostTensor& x, const Dims& perm, const Dims& out_shape) {
  const Dims in_strides = BroadcastStrides(x.shape, x.shape.size());
  // Output axis d walks input axis perm[d]. Size-1 axes have stride 0, which is harmless.
  Dims strides(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) strides[d] = in_strides[perm[d]];
  return StridedCopy(x, strides, out_shape);
}

HostTensor BroadcastTo(const HostTensor& x, const Dims& out_shape) {
  return StridedCopy(x, BroadcastStrides(x.shape, out_shape.size()), out_shape);
}

HostTensor Concat(std::span<const HostTensor* const> inputs, int64_t axis, const Dims& out_shape) {
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= out_shape[i];
  return ByStorage(inputs[0]->dtype, [&](auto tag) {
    using T = decltype(tag);
    HostTensor out = Result(out_shape, inputs[0]->dtype);
    std::vector<T>& y = Values<T>(out);
    y.reserve(NumElements(out_shape));
    for (int64_t o = 0; o < outer; ++o) {
      for (const HostTensor* in : inputs) {
        const int64_t chunk = outer == 0 ? 0 : in->NumElements() / outer;
        const std::vector<T>& v = Values<T>(*in);
        y.insert(y.end(), v.begin() + o * chunk, v.begin() + (o + 1) * chunk);
      }
    }
    return out;
  });
}

HostTensor Slice(const HostTensor& x, int64_t axis, int64_t start, int64_t step,
                 const Dims& out_shape) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x.shape[i];
  for (size_t i = axis + 1; i < x.shape.size(); ++i) inner *= x.shape[i];
  const int64_t in_len = x.shape[axis], out_len = out_shape[axis];
  return ByStorage(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T>& in = Values<T>(x);
    HostTensor out = Result(out_shape, x.dtype);
    std::vector<T>& y = Values<T>(out);
    y.reserve(NumElements(out_shape));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < out_len; ++j) {
        const auto row = in.begin() + (o * in_len + start + j * step) * inner;
        y.insert(y.end(), row, row + inner);
      }
    }
    return out;
  });
}

}  // namespace pto::ops::internal
