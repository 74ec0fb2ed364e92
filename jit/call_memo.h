// The warm call's shortcut: per thread, the last calls each Function accepted, by the exact
// rank, dims, strides and dtype of every view. A call whose views match one again skips the
// checks and the dispatch lookup those decide (view shapes and dtypes, shape guards, output
// shapes, in-place shapes) and reuses the class and symbol values found then; what depends on
// its pointers (null, alignment, overlap) it still checks. Any mismatch, or a pointer the
// shortcut would reject, takes the full path, which gives every error its own message.
//
// Per thread, so nothing is shared: a hit reads only this thread's entries, and a Function's
// id (never reused) keeps a later Function at the same address from matching an old entry.
#ifndef PTO_JIT_CALL_MEMO_H_
#define PTO_JIT_CALL_MEMO_H_

#include <cstdint>

#include "absl/types/span.h"
#include "pto/runtime.h"

namespace pto::detail {

struct CompiledClass;

// A fresh Function id (never 0, never reused in the process).
uint64_t NewFunctionId();

struct CallMemoEntry {
  static constexpr int kMaxWords = 96;  // the views' encoded shapes
  static constexpr int kMaxViews = 24;  // inputs and outputs
  static constexpr int kMaxValues = 32;

  uint64_t function = 0;  // 0: empty
  int words = 0;
  uint64_t signature[kMaxWords];
  uint64_t bytes[kMaxViews];  // each view's size: inputs, then outputs
  const CompiledClass* cls = nullptr;
  int num_values = 0;
  int64_t values[kMaxValues];
};

// This thread's entry of `function` if the views match it exactly, else null. The entry stays
// this thread's until its next Remember.
const CallMemoEntry* FindCallMemo(uint64_t function, absl::Span<const TensorView> inputs,
                                  absl::Span<const TensorView> outputs);

// Records a call every shape-dependent check accepted (the views dense and valid, the class
// and its symbol values found for them). Calls too large for an entry are not recorded.
void RememberCall(uint64_t function, absl::Span<const TensorView> inputs,
                  absl::Span<const TensorView> outputs, const CompiledClass& cls,
                  absl::Span<const int64_t> values);

// The pointer checks a remembered call still needs: each non-empty view's data non-null and
// 4-byte aligned, and no output overlapping an input or another output unless it is the input
// declared in place of it (same data: the shapes were checked equal when it was remembered).
// False sends the call down the full path.
bool PointersUsable(const CallMemoEntry& memo, absl::Span<const TensorView> inputs,
                    absl::Span<const TensorView> outputs, absl::Span<const InPlaceOutput> in_place);

}  // namespace pto::detail

#endif  // PTO_JIT_CALL_MEMO_H_
