// The one place where LLVM's Error / Expected become absl::Status (internal to jit/).
#ifndef PTO_JIT_ORC_LLVM_STATUS_H_
#define PTO_JIT_ORC_LLVM_STATUS_H_

#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "llvm/Support/Error.h"

namespace pto::jit {

// OK for success; AlreadyExists for duplicate JIT symbol definitions; NotFound for missing
// JIT symbols; Internal otherwise.
// `what` prefixes the message ("loading kernel foo").
absl::Status ToStatus(llvm::Error error, std::string_view what);

template <typename T>
absl::StatusOr<T> ToStatusOr(llvm::Expected<T> expected, std::string_view what) {
  if (!expected) return ToStatus(expected.takeError(), what);
  return std::move(*expected);
}

}  // namespace pto::jit

#endif  // PTO_JIT_ORC_LLVM_STATUS_H_
