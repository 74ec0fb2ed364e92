#include "jit/orc/llvm_status.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Shared/OrcError.h"

namespace pto::jit {

absl::Status ToStatus(llvm::Error error, std::string_view what) {
  if (!error) return absl::OkStatus();
  absl::StatusCode code = absl::StatusCode::kInternal;
  std::string message;
  llvm::handleAllErrors(
      std::move(error),
      [&](const llvm::orc::DuplicateDefinition& e) {
        code = absl::StatusCode::kAlreadyExists;
        absl::StrAppend(&message, message.empty() ? "" : "; ", e.message());
      },
      [&](const llvm::orc::SymbolsNotFound& e) {
        code = absl::StatusCode::kNotFound;
        absl::StrAppend(&message, message.empty() ? "" : "; ", e.message());
      },
      [&](const llvm::ErrorInfoBase& e) {
        absl::StrAppend(&message, message.empty() ? "" : "; ", e.message());
      });
  return absl::Status(code, absl::StrCat(std::string(what), ": ", message));
}

}  // namespace pto::jit
