#include "jit/orc/object_code.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "device/yield_point.h"
#include "jit/codegen/optimize.h"
#include "jit/orc/llvm_status.h"
#include "jit/orc/target_machine.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Pass.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace pto::jit {
namespace {

// Runs the compile's yield hook. Preserves everything, so it can sit between any two passes.
class YieldPass : public llvm::FunctionPass {
 public:
  static char ID;
  YieldPass() : llvm::FunctionPass(ID) {}
  bool runOnFunction(llvm::Function&) override {
    device::YieldPoint();
    return false;
  }
  void getAnalysisUsage(llvm::AnalysisUsage& usage) const override { usage.setPreservesAll(); }
  llvm::StringRef getPassName() const override { return "pto compile yield"; }
};
char YieldPass::ID = 0;

// The legacy pass manager yields between module-level passes only, and the machine passes of a
// function (most of codegen's time) run as one: a yield pass follows every function pass here.
class YieldingPassManager : public llvm::legacy::PassManager {
 public:
  void add(llvm::Pass* pass) override {
    const bool function_pass = pass->getPassKind() == llvm::PT_Function;
    llvm::legacy::PassManager::add(pass);
    if (function_pass) llvm::legacy::PassManager::add(new YieldPass());
  }
};

absl::StatusOr<std::string> Codegen(llvm::Module& module, llvm::TargetMachine& tm,
                                    llvm::CodeGenFileType type) {
  module.setDataLayout(tm.createDataLayout());
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  // Only compiles with a yield hook (the background tuner's) get the extra passes.
  std::unique_ptr<llvm::legacy::PassManager> pm =
      device::HasYieldHook() ? std::make_unique<YieldingPassManager>()
                             : std::make_unique<llvm::legacy::PassManager>();
  if (tm.addPassesToEmitFile(*pm, os, nullptr, type)) {
    return absl::InternalError(
        absl::StrCat("TargetMachine cannot emit this file type for ", module.getName().str()));
  }
  pm->run(module);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace

absl::StatusOr<std::string> EmitObject(llvm::Module& module, llvm::TargetMachine& tm) {
  return Codegen(module, tm, llvm::CodeGenFileType::ObjectFile);
}

absl::StatusOr<std::string> EmitAssembly(llvm::Module& module, const CodegenTarget& target) {
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = CreateTargetMachine(target);
  if (!tm.ok()) return tm.status();
  OptimizeModule(module, **tm);
  return Codegen(module, **tm, llvm::CodeGenFileType::AssemblyFile);
}

absl::StatusOr<std::string> EmitOptimizedIR(llvm::Module& module, const CodegenTarget& target) {
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = CreateTargetMachine(target);
  if (!tm.ok()) return tm.status();
  OptimizeModule(module, **tm);
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  os.flush();
  return text;
}

absl::StatusOr<std::vector<std::string>> UndefinedSymbols(std::string_view object) {
  llvm::MemoryBufferRef ref(llvm::StringRef(object.data(), object.size()), "pto-kernel");
  auto file = llvm::object::ObjectFile::createObjectFile(ref);
  if (!file) {
    absl::Status s = ToStatus(file.takeError(), "reading kernel object");
    return absl::InvalidArgumentError(s.message());
  }
  std::vector<std::string> names;
  for (const llvm::object::SymbolRef& sym : (*file)->symbols()) {
    llvm::Expected<uint32_t> flags = sym.getFlags();
    if (!flags) return ToStatus(flags.takeError(), "reading kernel object symbols");
    if ((*flags & llvm::object::SymbolRef::SF_Undefined) == 0) continue;
    llvm::Expected<llvm::StringRef> name = sym.getName();
    if (!name) return ToStatus(name.takeError(), "reading kernel object symbols");
    if (!name->empty()) names.push_back(name->str());
  }
  return names;
}

}  // namespace pto::jit
