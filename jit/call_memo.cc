#include "jit/call_memo.h"

#include <algorithm>
#include <atomic>

#include "jit/output_overlap.h"

namespace pto::detail {
namespace {

// Enough for the Functions one thread alternates between (a training loop's step, a serving
// loop's few models); a Function whose slot another took re-checks once and takes it back.
constexpr int kEntries = 8;

thread_local CallMemoEntry entries[kEntries];

CallMemoEntry& SlotOf(uint64_t function) { return entries[function % kEntries]; }

uint64_t Header(size_t inputs, size_t outputs) {
  return static_cast<uint64_t>(inputs) | static_cast<uint64_t>(outputs) << 32;
}

uint64_t ViewWord(const TensorView& v) {
  return static_cast<uint32_t>(v.rank) | static_cast<uint64_t>(v.dtype) << 32;
}

// Compares one view with its encoding at `w` (bounded by `end`); advances `w` past it.
bool MatchView(const TensorView& v, const uint64_t*& w, const uint64_t* end) {
  if (w == end || *w != ViewWord(v)) return false;
  ++w;
  // The stored rank was a valid one, so the view's rank (equal to it) indexes its arrays.
  if (end - w < 2 * v.rank) return false;
  for (int d = 0; d < v.rank; ++d) {
    if (w[d] != static_cast<uint64_t>(v.shape[d]) ||
        w[v.rank + d] != static_cast<uint64_t>(v.strides[d])) {
      return false;
    }
  }
  w += 2 * v.rank;
  return true;
}

}  // namespace

uint64_t NewFunctionId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

const CallMemoEntry* FindCallMemo(uint64_t function, absl::Span<const TensorView> inputs,
                                  absl::Span<const TensorView> outputs) {
  const CallMemoEntry& e = SlotOf(function);
  if (e.function != function || e.signature[0] != Header(inputs.size(), outputs.size())) {
    return nullptr;
  }
  const uint64_t* w = e.signature + 1;
  const uint64_t* end = e.signature + e.words;
  for (const TensorView& v : inputs) {
    if (!MatchView(v, w, end)) return nullptr;
  }
  for (const TensorView& v : outputs) {
    if (!MatchView(v, w, end)) return nullptr;
  }
  return w == end ? &e : nullptr;
}

void RememberCall(uint64_t function, absl::Span<const TensorView> inputs,
                  absl::Span<const TensorView> outputs, const CompiledClass& cls,
                  absl::Span<const int64_t> values) {
  const size_t views = inputs.size() + outputs.size();
  size_t words = 1;
  for (const TensorView& v : inputs) words += 1 + 2 * static_cast<size_t>(v.rank);
  for (const TensorView& v : outputs) words += 1 + 2 * static_cast<size_t>(v.rank);
  CallMemoEntry& e = SlotOf(function);
  if (views > CallMemoEntry::kMaxViews || words > CallMemoEntry::kMaxWords ||
      values.size() > CallMemoEntry::kMaxValues) {
    if (e.function == function) e.function = 0;  // its views are no longer the last call's
    return;
  }
  e.function = function;
  e.words = static_cast<int>(words);
  uint64_t* w = e.signature;
  *w++ = Header(inputs.size(), outputs.size());
  size_t view = 0;
  const auto add = [&](const TensorView& v) {
    *w++ = ViewWord(v);
    w = std::copy_n(reinterpret_cast<const uint64_t*>(v.shape), v.rank, w);
    w = std::copy_n(reinterpret_cast<const uint64_t*>(v.strides), v.rank, w);
    // The full path accepted the view, so its element count does not overflow.
    e.bytes[view++] = static_cast<uint64_t>(v.num_elements()) * DTypeSize(v.dtype);
  };
  for (const TensorView& v : inputs) add(v);
  for (const TensorView& v : outputs) add(v);
  e.cls = &cls;
  e.num_values = static_cast<int>(values.size());
  std::copy(values.begin(), values.end(), e.values);
}

bool PointersUsable(const CallMemoEntry& memo, absl::Span<const TensorView> inputs,
                    absl::Span<const TensorView> outputs,
                    absl::Span<const InPlaceOutput> in_place) {
  // A remembered call has at most kMaxViews views in all.
  const void* in[CallMemoEntry::kMaxViews];
  void* out[CallMemoEntry::kMaxViews];
  for (size_t i = 0; i < inputs.size(); ++i) in[i] = inputs[i].data;
  for (size_t o = 0; o < outputs.size(); ++o) out[o] = outputs[o].data;
  return DataPointersUsable({memo.bytes, inputs.size() + outputs.size()}, {in, inputs.size()},
                            {out, outputs.size()}, in_place);
}

}  // namespace pto::detail
