// Fuzz target: the .npy reader (tools/npy.h). Any bytes give an array or a documented error;
// an array read is written back and read again unchanged, bit for bit, in its dtype.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "tests/fuzz/fuzz_target.h"
#include "tools/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using pto::tools::NpyArray;
  const absl::StatusOr<NpyArray> array = pto::tools::ParseNpy(pto::fuzz::AsText(data, size), "in");
  if (!array.ok()) {
    const absl::StatusCode code = array.status().code();
    FUZZ_CHECK(code == absl::StatusCode::kInvalidArgument ||
                   code == absl::StatusCode::kUnimplemented || code == absl::StatusCode::kDataLoss,
               "ParseNpy fails with InvalidArgument, Unimplemented or DataLoss, got " +
                   array.status().ToString());
    FUZZ_CHECK(array.status().message().substr(0, 4) == "in: ",
               "the error names the input: " + array.status().ToString());
    return 0;
  }
  size_t count = 1;
  for (int64_t d : array->shape) count *= static_cast<size_t>(d);
  FUZZ_CHECK(count == static_cast<size_t>(array->size()),
             "the array holds product(shape) elements");
  FUZZ_CHECK(array->dtype == pto::ir::DType::kF32 ? array->wide.empty() : array->data.empty(),
             "only the dtype's storage is filled");

  const absl::StatusOr<std::string> bytes = pto::tools::SerializeNpy(*array);
  FUZZ_CHECK(bytes.ok(), "an array read serializes: " + bytes.status().ToString());
  const absl::StatusOr<NpyArray> back = pto::tools::ParseNpy(*bytes, "written");
  FUZZ_CHECK(back.ok(), "what SerializeNpy writes reads back: " + back.status().ToString());
  FUZZ_CHECK(back->shape == array->shape, "the shape reads back");
  FUZZ_CHECK(back->dtype == array->dtype, "the dtype reads back");
  FUZZ_CHECK(
      std::equal(back->data.begin(), back->data.end(), array->data.begin(), array->data.end(),
                 [](float a, float b) {
                   return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
                 }) &&
          std::equal(back->wide.begin(), back->wide.end(), array->wide.begin(), array->wide.end(),
                     [](double a, double b) {
                       return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
                     }),
      "the data reads back bit for bit");
  return 0;
}
