// A call's output views must each have memory of their own: an output may not overlap an input,
// and two outputs sharing bytes would be written in no defined order. The one exception is an
// output declared in place of an input (FunctionOptions::in_place_outputs) whose view is that
// input's view exactly: the same data pointer and shape. Any other overlap of byte ranges
// counts, partial or whole; empty views overlap nothing.
#ifndef PTO_JIT_OUTPUT_OVERLAP_H_
#define PTO_JIT_OUTPUT_OVERLAP_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "pto/options.h"
#include "pto/tensor.h"

namespace pto::detail {

// The pointer checks below run on every warm call (a BoundCall, a remembered call): they are
// defined here so that those paths inline them.

// Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte (an empty range
// shares none).
inline bool BytesOverlap(uintptr_t a, uint64_t a_bytes, uintptr_t b, uint64_t b_bytes) {
  return a_bytes > 0 && b_bytes > 0 && a < b + b_bytes && b < a + a_bytes;
}

// Whether `in_place` declares output `o` written in place of input `i`.
inline bool DeclaredInPlace(absl::Span<const InPlaceOutput> in_place, size_t o, size_t i) {
  for (const InPlaceOutput& p : in_place) {
    if (static_cast<size_t>(p.output) == o && static_cast<size_t>(p.input) == i) return true;
  }
  return false;
}

// The pointer checks of a call whose shapes were checked before (a remembered call, a
// BoundCall): each tensor's data non-null unless it is empty and 4-byte aligned, and no output
// overlapping an input or another output unless it is the input declared in place of it (the
// same data: the shapes were checked equal). `bytes` holds each tensor's size, inputs then
// outputs. False means a check failed; the full checks of views then say which.
inline bool DataPointersUsable(absl::Span<const uint64_t> bytes,
                               absl::Span<const void* const> inputs,
                               absl::Span<void* const> outputs,
                               absl::Span<const InPlaceOutput> in_place) {
  const uint64_t* in_bytes = bytes.data();
  const uint64_t* out_bytes = bytes.data() + inputs.size();
  const auto usable = [](const void* data, uint64_t size) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(data);
    return (p != 0 || size == 0) && p % alignof(float) == 0;
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!usable(inputs[i], in_bytes[i])) return false;
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (!usable(outputs[o], out_bytes[o])) return false;
    const uintptr_t out = reinterpret_cast<uintptr_t>(outputs[o]);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (BytesOverlap(out, out_bytes[o], reinterpret_cast<uintptr_t>(inputs[i]), in_bytes[i]) &&
          !(outputs[o] == inputs[i] && DeclaredInPlace(in_place, o, i))) {
        return false;
      }
    }
    for (size_t p = 0; p < o; ++p) {
      if (BytesOverlap(out, out_bytes[o], reinterpret_cast<uintptr_t>(outputs[p]), out_bytes[p])) {
        return false;
      }
    }
  }
  return true;
}

// InvalidArgument naming the first output that overlaps an input ("output 1 overlaps input 0")
// or an earlier output ("output 1 overlaps output 0"), except a declared pair over the same
// memory. The views must be valid f32 views with an element count that fits (as the call's
// view checks ensure). Allocates nothing.
absl::Status CheckOutputsDisjoint(absl::Span<const TensorView> inputs,
                                  absl::Span<const TensorView> outputs,
                                  absl::Span<const InPlaceOutput> in_place = {});

// Each declared pair's output view has its input's dtype and shape (InvalidArgument naming
// both otherwise). The pairs' indices must be in range. Allocates nothing.
absl::Status CheckInPlaceShapes(absl::Span<const TensorView> inputs,
                                absl::Span<const TensorView> outputs,
                                absl::Span<const InPlaceOutput> in_place);

}  // namespace pto::detail

#endif  // PTO_JIT_OUTPUT_OVERLAP_H_
