// A call's output views must each have memory of their own: pto does not compute in place (an
// output may not overlap an input), and two outputs sharing bytes would be written in no
// defined order. Any overlap of byte ranges counts, partial or whole; empty views overlap
// nothing.
#ifndef PTO_JIT_OUTPUT_OVERLAP_H_
#define PTO_JIT_OUTPUT_OVERLAP_H_

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "pto/tensor.h"

namespace pto::detail {

// InvalidArgument naming the first output that overlaps an input ("output 1 overlaps input 0")
// or an earlier output ("output 1 overlaps output 0"). The views must be valid f32 views with
// an element count that fits (as the call's view checks ensure). Allocates nothing.
absl::Status CheckOutputsDisjoint(absl::Span<const TensorView> inputs,
                                  absl::Span<const TensorView> outputs);

}  // namespace pto::detail

#endif  // PTO_JIT_OUTPUT_OVERLAP_H_
