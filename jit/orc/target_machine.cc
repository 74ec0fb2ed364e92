#include "jit/orc/target_machine.h"

#include <mutex>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

namespace pto::jit {

void InitializeNativeTargetOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(
    const CodegenTarget& target) {
  InitializeNativeTargetOnce();
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (t == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("no LLVM target for triple '", target.triple, "': ", error));
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(t->createTargetMachine(
      target.triple, target.cpu_name, target.features, options, llvm::Reloc::PIC_,
      llvm::CodeModel::Small, llvm::CodeGenOptLevel::Default));
  if (tm == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("cannot create a TargetMachine for cpu '",
                                                      target.cpu_name, "' (", target.triple, ")"));
  }
  return tm;
}

}  // namespace pto::jit
