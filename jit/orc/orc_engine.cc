#include "jit/orc/orc_engine.h"

#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "jit/codegen/optimize.h"
#include "jit/orc/kernel_object_check.h"
#include "jit/orc/llvm_status.h"
#include "jit/orc/object_code.h"
#include "jit/orc/target_machine.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace pto::jit {

struct OrcEngine::Jit {
  std::unique_ptr<llvm::orc::LLJIT> lljit;
};

struct KernelHandle::State {
  std::shared_ptr<OrcEngine::Jit> jit;  // keeps the JIT alive while code is loaded
  llvm::orc::ResourceTrackerSP tracker;
  ~State() {
    if (tracker) llvm::consumeError(tracker->remove());
  }
};

KernelHandle::KernelHandle() = default;
KernelHandle::~KernelHandle() = default;
KernelHandle::KernelHandle(std::unique_ptr<State> state) : state_(std::move(state)) {}
KernelHandle::KernelHandle(KernelHandle&& other) noexcept = default;
KernelHandle& KernelHandle::operator=(KernelHandle&& other) noexcept = default;
void KernelHandle::Reset() { state_.reset(); }

OrcEngine::OrcEngine(const CodegenTarget& target, std::shared_ptr<Jit> jit,
                     std::vector<std::string> allowed)
    : target_(target), jit_(std::move(jit)), allowed_(std::move(allowed)) {}

OrcEngine::~OrcEngine() = default;

namespace {

// What kernels may call: kAllowedUndefinedSymbols bound to this process's functions, and the
// runtime symbols.
std::vector<RuntimeSymbol> KernelImports(const OrcEngineOptions& options) {
  std::vector<RuntimeSymbol> imports = {
      {"memset", reinterpret_cast<const void*>(&::memset)},
      {"memcpy", reinterpret_cast<const void*>(&::memcpy)},
      {"memmove", reinterpret_cast<const void*>(&::memmove)},
  };
  static_assert(kAllowedUndefinedSymbols.size() == 3, "bind every allowed symbol here");
  imports.insert(imports.end(), options.runtime_symbols.begin(), options.runtime_symbols.end());
  return imports;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OrcEngine>> OrcEngine::Create(const CodegenTarget& target,
                                                             const OrcEngineOptions& options) {
  InitializeNativeTargetOnce();
  // Fail early if the target cannot be built.
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = CreateTargetMachine(target);
  if (!tm.ok()) return tm.status();
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(target.triple)};
  jtmb.setCPU(target.cpu_name);
  std::vector<std::string> features = absl::StrSplit(target.features, ',', absl::SkipEmpty());
  jtmb.addFeatures(features);
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeModel(llvm::CodeModel::Small);
  const std::vector<RuntimeSymbol> imports = KernelImports(options);
  std::vector<std::string> allowed;
  for (const RuntimeSymbol& s : imports) allowed.push_back(s.name);
  // In place of the process's whole symbol table (LLJIT's default), kernels link against a
  // dylib of their imports only; no platform runtime (kernels have no initializers).
  auto setup_imports = [imports](llvm::orc::LLJIT& j) -> llvm::Expected<llvm::orc::JITDylibSP> {
    llvm::orc::ExecutionSession& es = j.getExecutionSession();
    llvm::orc::JITDylib& jd = es.createBareJITDylib("<pto kernel imports>");
    llvm::orc::SymbolMap map;
    for (const RuntimeSymbol& s : imports) {
      map[es.intern(s.name)] = {llvm::orc::ExecutorAddr::fromPtr(s.address),
                                llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    }
    if (llvm::Error err = jd.define(llvm::orc::absoluteSymbols(std::move(map)))) return err;
    return llvm::orc::JITDylibSP(&jd);
  };
  absl::StatusOr<std::unique_ptr<llvm::orc::LLJIT>> lljit =
      ToStatusOr(llvm::orc::LLJITBuilder()
                     .setJITTargetMachineBuilder(std::move(jtmb))
                     .setProcessSymbolsJITDylibSetup(std::move(setup_imports))
                     .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
                     .create(),
                 "creating LLJIT");
  if (!lljit.ok()) return lljit.status();
  auto jit = std::make_shared<Jit>();
  jit->lljit = std::move(*lljit);
  return std::unique_ptr<OrcEngine>(new OrcEngine(target, std::move(jit), std::move(allowed)));
}

absl::StatusOr<CompiledObject> OrcEngine::Compile(std::unique_ptr<llvm::Module> module,
                                                  std::unique_ptr<llvm::LLVMContext> context) {
  if (module == nullptr) return absl::InvalidArgumentError("Compile: null module");
  std::string symbol;
  int defined = 0;
  for (const llvm::Function& f : *module) {
    if (f.isDeclaration() || !f.hasExternalLinkage()) continue;
    symbol = f.getName().str();
    ++defined;
  }
  if (defined != 1) {
    return absl::InvalidArgumentError(absl::StrCat("Compile: module '", module->getName().str(),
                                                   "' defines ", defined,
                                                   " external functions, expected 1"));
  }
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(*module, &os)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Compile: invalid module '", symbol, "': ", os.str()));
  }
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = CreateTargetMachine(target_);
  if (!tm.ok()) return tm.status();
  OptimizeModule(*module, **tm);
  absl::StatusOr<std::string> object = EmitObject(*module, **tm);
  module.reset();  // before its context
  context.reset();
  codegen_runs_.fetch_add(1, std::memory_order_relaxed);
  compile_nanos_.fetch_add(absl::ToInt64Nanoseconds(absl::Now() - start),
                           std::memory_order_relaxed);
  if (!object.ok()) return object.status();
  return LoadObject(std::move(*object), symbol);
}

absl::StatusOr<CompiledObject> OrcEngine::Load(std::string_view object_bytes,
                                               std::string_view symbol) {
  return LoadObject(std::string(object_bytes), symbol);
}

absl::StatusOr<CompiledObject> OrcEngine::LoadObject(std::string object, std::string_view symbol) {
  absl::Status check = CheckKernelObject(object, symbol, allowed_);
  if (!check.ok()) return check;
  llvm::orc::LLJIT& lljit = *jit_->lljit;
  auto state = std::make_unique<KernelHandle::State>();
  state->jit = jit_;
  state->tracker = lljit.getMainJITDylib().createResourceTracker();
  const std::string what = absl::StrCat("loading kernel '", std::string(symbol), "'");
  std::unique_ptr<llvm::MemoryBuffer> buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(object.data(), object.size()), std::string(symbol));
  absl::Status added = ToStatus(lljit.addObjectFile(state->tracker, std::move(buffer)), what);
  if (!added.ok()) return added;  // ~State removes the tracker
  absl::StatusOr<llvm::orc::ExecutorAddr> addr =
      ToStatusOr(lljit.lookup(state->tracker->getJITDylib(), llvm::StringRef(symbol)), what);
  if (!addr.ok()) return addr.status();
  CompiledObject out;
  out.entry = addr->toPtr<pto_kernel_fn>();
  out.symbol = std::string(symbol);
  out.object = std::move(object);
  out.handle = KernelHandle(std::move(state));
  loads_.fetch_add(1, std::memory_order_relaxed);
  return out;
}

}  // namespace pto::jit
