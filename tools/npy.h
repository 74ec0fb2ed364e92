// NumPy .npy files (format versions 1.0, 2.0 and 3.0), little-endian, C order, of three dtypes:
// float32 ('<f4', ir::DType::kF32), int32 ('<i4', kI32) and float64 ('<f8', kF64). Used by
// tools and tests to exchange tensors with NumPy.
#ifndef PTO_TOOLS_NPY_H_
#define PTO_TOOLS_NPY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ops/host_tensor.h"

namespace pto::tools {

// An array read from or written to .npy: a HostTensor, whose dtype is the file's ('<f4' values
// in `data`, '<i4' and '<f8' in `wide`); an empty shape is a scalar (one element).
using NpyArray = ops::HostTensor;

// Parses the bytes of a .npy file; `name` (a path, usually) names it in error messages.
// Errors: InvalidArgument for a bad magic string, version or header, a descr other than '<f4',
// '<i4' and '<f8' (naming it), or trailing bytes after the data; Unimplemented for
// fortran_order True; DataLoss when the data is shorter than the shape requires (with expected
// and actual byte counts).
absl::StatusOr<NpyArray> ParseNpy(std::string_view bytes, std::string_view name);

// The .npy bytes of `array`, as numpy.save writes them: version 1.0 (2.0 if the header needs
// it), header padded with spaces and a newline so the data starts at a multiple of 64.
// InvalidArgument if a dim is negative, the stored size (HostTensor::size()) is not the product
// of the shape, the dtype is not f32, i32 or f64, or an i32 element is not an int32.
absl::StatusOr<std::string> SerializeNpy(const NpyArray& array);

// File variants. ReadNpy: NotFound (naming the path) when the file does not exist.
absl::StatusOr<NpyArray> ReadNpy(const std::string& path);
absl::Status WriteNpy(const std::string& path, const NpyArray& array);

}  // namespace pto::tools

#endif  // PTO_TOOLS_NPY_H_
