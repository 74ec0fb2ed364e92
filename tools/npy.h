// NumPy .npy files (format versions 1.0, 2.0 and 3.0): little-endian float32 ('<f4'), C order.
// Used by tools and tests to exchange tensors with NumPy.
#ifndef PTO_TOOLS_NPY_H_
#define PTO_TOOLS_NPY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace pto::tools {

struct NpyArray {
  std::vector<int64_t> shape;  // empty: a scalar (one element)
  std::vector<float> data;     // row-major, product(shape) elements
};

// Parses the bytes of a .npy file; `name` (a path, usually) names it in error messages.
// Errors: InvalidArgument for a bad magic string, version or header, or trailing bytes after
// the data; Unimplemented for a dtype other than '<f4' or fortran_order True; DataLoss when
// the data is shorter than the shape requires (with expected and actual byte counts).
absl::StatusOr<NpyArray> ParseNpy(std::string_view bytes, std::string_view name);

// The .npy bytes of `array`, as numpy.save writes them: version 1.0 (2.0 if the header needs
// it), header padded with spaces and a newline so the data starts at a multiple of 64.
// InvalidArgument if a dim is negative or data.size() is not the product of the shape.
absl::StatusOr<std::string> SerializeNpy(const NpyArray& array);

// File variants. ReadNpy: NotFound (naming the path) when the file does not exist.
absl::StatusOr<NpyArray> ReadNpy(const std::string& path);
absl::Status WriteNpy(const std::string& path, const NpyArray& array);

}  // namespace pto::tools

#endif  // PTO_TOOLS_NPY_H_
