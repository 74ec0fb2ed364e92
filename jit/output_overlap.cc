#include "jit/output_overlap.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace pto::detail {
namespace {

uintptr_t Address(const TensorView& view) { return reinterpret_cast<uintptr_t>(view.data); }

uint64_t Bytes(const TensorView& view) {
  return static_cast<uint64_t>(view.num_elements()) * sizeof(float);
}

// Output o is input i's view exactly and declared in place of it.
bool DeclaredSameMemory(const TensorView& out, const TensorView& in, size_t o, size_t i,
                        absl::Span<const InPlaceOutput> in_place) {
  if (out.data != in.data || out.rank != in.rank) return false;
  for (int d = 0; d < out.rank; ++d) {
    if (out.shape[d] != in.shape[d]) return false;
  }
  return DeclaredInPlace(in_place, o, i);
}

}  // namespace

absl::Status CheckInPlaceShapes(absl::Span<const TensorView> inputs,
                                absl::Span<const TensorView> outputs,
                                absl::Span<const InPlaceOutput> in_place) {
  for (const InPlaceOutput& p : in_place) {
    const TensorView& out = outputs[p.output];
    const TensorView& in = inputs[p.input];
    if (out.dtype != in.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "output ", p.output, " (", DTypeName(out.dtype), ") cannot be written in place of input ",
          p.input, " (", DTypeName(in.dtype), "): an in-place output needs its input's dtype"));
    }
    bool same = out.rank == in.rank;
    for (int d = 0; same && d < out.rank; ++d) same = out.shape[d] == in.shape[d];
    if (!same) {
      return absl::InvalidArgumentError(
          absl::StrCat("output ", p.output, " (shape ", out.ShapeString(),
                       ") cannot be written in place of input ", p.input, " (shape ",
                       in.ShapeString(), "): an in-place output needs its input's shape"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckOutputsDisjoint(absl::Span<const TensorView> inputs,
                                  absl::Span<const TensorView> outputs,
                                  absl::Span<const InPlaceOutput> in_place) {
  for (size_t o = 0; o < outputs.size(); ++o) {
    const uintptr_t out = Address(outputs[o]);
    const uint64_t out_bytes = Bytes(outputs[o]);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (BytesOverlap(out, out_bytes, Address(inputs[i]), Bytes(inputs[i])) &&
          !DeclaredSameMemory(outputs[o], inputs[i], o, i, in_place)) {
        return absl::InvalidArgumentError(
            absl::StrCat("output ", o, " overlaps input ", i, " (pto does not compute in place)"));
      }
    }
    for (size_t p = 0; p < o; ++p) {
      if (BytesOverlap(out, out_bytes, Address(outputs[p]), Bytes(outputs[p]))) {
        return absl::InvalidArgumentError(
            absl::StrCat("output ", o, " overlaps output ", p,
                         " (each output needs memory of its own: pass a separate buffer)"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace pto::detail
