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

// Whether the byte ranges [a, a + a_bytes) and [b, b + b_bytes) share a byte (an empty range
// shares none).
bool BytesOverlap(uintptr_t a, uint64_t a_bytes, uintptr_t b, uint64_t b_bytes);

// Whether `in_place` declares output `o` written in place of input `i`.
bool DeclaredInPlace(absl::Span<const InPlaceOutput> in_place, size_t o, size_t i);

// The pointer checks of a call whose shapes were checked before (a remembered call, a
// BoundCall): each tensor's data non-null unless it is empty and 4-byte aligned, and no output
// overlapping an input or another output unless it is the input declared in place of it (the
// same data: the shapes were checked equal). `bytes` holds each tensor's size, inputs then
// outputs. False means a check failed; the full checks of views then say which.
bool DataPointersUsable(absl::Span<const uint64_t> bytes, absl::Span<const void* const> inputs,
                        absl::Span<void* const> outputs, absl::Span<const InPlaceOutput> in_place);

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
