// A Function's constant inputs (FunctionOptions::constant_inputs): copied at the first call
// and again at the first call after InvalidateConstants, so the plans read them (and pack
// them for matmuls) once. Calls read the current copy lock-free; replaced copies stay alive
// for calls that may still read them, until the Function goes.
#ifndef PTO_JIT_CONSTANT_INPUTS_H_
#define PTO_JIT_CONSTANT_INPUTS_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "device/aligned_buffer.h"
#include "pto/runtime.h"

namespace pto::detail {

class ConstantInputs {
 public:
  ConstantInputs(int num_inputs, const std::vector<int>& constant_inputs);

  bool is_constant(int input) const { return is_constant_[input]; }
  // Whether any input is constant (a call without any passes its pointers through).
  bool any() const { return any_; }
  const std::vector<bool>& is_constant() const { return is_constant_; }
  // Copies the constant inputs of this call if the copy is stale. ResourceExhausted if a copy
  // cannot be allocated.
  absl::Status RefreshIfStale(absl::Span<const TensorView> inputs);
  // The current copies (after RefreshIfStale), per input; empty for the other inputs.
  const std::vector<device::AlignedBuffer>& current() const {
    return current_.load(std::memory_order_acquire)->data;
  }
  void Invalidate() { stale_.store(true); }
  // Whether the next RefreshIfStale copies (one atomic load).
  bool stale() const { return stale_.load(std::memory_order_acquire); }

 private:
  struct Set {
    std::vector<device::AlignedBuffer> data;  // per input (empty for non-constants)
  };
  std::vector<bool> is_constant_;
  bool any_ = false;
  std::atomic<const Set*> current_{nullptr};
  std::atomic<bool> stale_{true};
  std::mutex mu_;  // serializes refreshes
  std::vector<std::unique_ptr<const Set>> sets_;
};

}  // namespace pto::detail

#endif  // PTO_JIT_CONSTANT_INPUTS_H_
