#include "jit/output_overlap.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace pto::detail {
namespace {

struct ByteRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;  // exclusive
};

ByteRange RangeOf(const TensorView& view) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(view.data);
  return {begin, begin + static_cast<uintptr_t>(view.num_elements()) * sizeof(float)};
}

bool Overlap(ByteRange a, ByteRange b) {
  return a.begin < a.end && b.begin < b.end && a.begin < b.end && b.begin < a.end;
}

}  // namespace

absl::Status CheckOutputsDisjoint(absl::Span<const TensorView> inputs,
                                  absl::Span<const TensorView> outputs) {
  for (size_t o = 0; o < outputs.size(); ++o) {
    const ByteRange out = RangeOf(outputs[o]);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (Overlap(out, RangeOf(inputs[i]))) {
        return absl::InvalidArgumentError(
            absl::StrCat("output ", o, " overlaps input ", i, " (pto does not compute in place)"));
      }
    }
    for (size_t p = 0; p < o; ++p) {
      if (Overlap(out, RangeOf(outputs[p]))) {
        return absl::InvalidArgumentError(
            absl::StrCat("output ", o, " overlaps output ", p,
                         " (each output needs memory of its own: pass a separate buffer)"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace pto::detail
