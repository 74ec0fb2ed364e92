// The constant input buffers of a Function that check_numerics found finite, so that each is
// scanned once rather than at every call. A Function's constant copies (jit/constant_inputs.h)
// are never written after they are made and never freed while it lives: a copy's address
// names its contents.
#ifndef PTO_JIT_NUMERICS_CHECKED_CONSTANTS_H_
#define PTO_JIT_NUMERICS_CHECKED_CONSTANTS_H_

#include <atomic>
#include <memory>

namespace pto::jit::numerics {

class CheckedConstants {
 public:
  explicit CheckedConstants(int num_inputs)
      : checked_(std::make_unique<std::atomic<const void*>[]>(num_inputs)) {}

  // Whether input `input`'s copy at `data` was found finite (lock-free).
  bool Checked(int input, const void* data) const {
    return checked_[input].load(std::memory_order_acquire) == data;
  }
  void MarkChecked(int input, const void* data) {
    checked_[input].store(data, std::memory_order_release);
  }

 private:
  std::unique_ptr<std::atomic<const void*>[]> checked_;
};

}  // namespace pto::jit::numerics

#endif  // PTO_JIT_NUMERICS_CHECKED_CONSTANTS_H_
