#include "jit/constant_inputs.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace pto::detail {

ConstantInputs::ConstantInputs(int num_inputs, const std::vector<int>& constant_inputs)
    : is_constant_(num_inputs, false), any_(!constant_inputs.empty()) {
  for (int c : constant_inputs) is_constant_[c] = true;
}

absl::Status ConstantInputs::RefreshIfStale(absl::Span<const TensorView> inputs) {
  if (!stale_.load(std::memory_order_acquire)) return absl::OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  if (!stale_.load()) return absl::OkStatus();
  auto set = std::make_unique<Set>();
  set->data.resize(is_constant_.size());
  for (size_t i = 0; i < is_constant_.size(); ++i) {
    if (!is_constant_[i]) continue;
    const size_t bytes = static_cast<size_t>(inputs[i].num_elements()) * sizeof(float);
    if (!set->data[i].Reserve(bytes)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", bytes, " bytes for constant input ", i));
    }
    if (bytes > 0) std::memcpy(set->data[i].data(), inputs[i].data, bytes);
  }
  current_.store(set.get(), std::memory_order_release);
  sets_.push_back(std::move(set));
  stale_.store(false);
  return absl::OkStatus();
}

}  // namespace pto::detail
