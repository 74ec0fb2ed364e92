// OrcEngine: compiles kernel modules to object code and loads object code into an LLJIT
// (JITLink, small code model, PIC). Every kernel lives under its own ResourceTracker, owned by
// a KernelHandle: destroying the handle frees the kernel's code.
//
// Thread safety: Compile and Load may be called from several threads at once; each call owns
// its module and context (one context per module), and builds its own TargetMachine.
#ifndef PTO_JIT_ORC_ORC_ENGINE_H_
#define PTO_JIT_ORC_ORC_ENGINE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jit/codegen/codegen_target.h"
#include "jit/kernel_abi.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace pto::jit {

// The undefined symbols every kernel object may reference (the code generator emits no libm
// calls; LLVM may form these from loops), besides the engine's runtime symbols. Objects
// referencing anything else are refused (kernel_object_check.h), and the engine resolves no
// other name: its JIT sees these functions of the process, not the process's symbol table.
inline constexpr std::array<std::string_view, 3> kAllowedUndefinedSymbols = {"memset", "memcpy",
                                                                             "memmove"};

// A function of this process that kernels may call by name.
struct RuntimeSymbol {
  std::string name;
  const void* address = nullptr;
};

struct OrcEngineOptions {
  // Symbols the engine defines for kernels beyond kAllowedUndefinedSymbols, e.g. the
  // bounds-fault handler of checked kernels (jit/codegen/bounds_fault.h). Objects may
  // reference these too; an engine without them refuses objects that do.
  std::vector<RuntimeSymbol> runtime_symbols;
};

// Owns one loaded kernel's code. Movable; destroying (or Reset) frees the code, after which
// the entry pointer must not be called. May outlive the OrcEngine that made it.
class KernelHandle {
 public:
  KernelHandle();
  ~KernelHandle();
  KernelHandle(KernelHandle&& other) noexcept;
  KernelHandle& operator=(KernelHandle&& other) noexcept;
  KernelHandle(const KernelHandle&) = delete;
  KernelHandle& operator=(const KernelHandle&) = delete;

  bool loaded() const { return state_ != nullptr; }
  void Reset();

  struct State;  // defined in orc_engine.cc

 private:
  friend class OrcEngine;
  explicit KernelHandle(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

struct CompiledObject {
  pto_kernel_fn entry = nullptr;
  std::string symbol;   // the kernel's symbol (ir::Kernel::name)
  std::string object;   // relocatable object file bytes (ELF), for the cache
  KernelHandle handle;  // keeps `entry` alive
};

class OrcEngine {
 public:
  static absl::StatusOr<std::unique_ptr<OrcEngine>> Create(const CodegenTarget& target,
                                                           const OrcEngineOptions& options = {});
  ~OrcEngine();
  OrcEngine(const OrcEngine&) = delete;
  OrcEngine& operator=(const OrcEngine&) = delete;

  // Optimizes (O2) and compiles a module that defines exactly one external function (the
  // kernel), checks the object (CheckKernelObject with allowed_symbols(): FailedPrecondition
  // naming what breaks the rule), loads it and looks up its entry.
  // AlreadyExists when a kernel of the same symbol is still loaded.
  absl::StatusOr<CompiledObject> Compile(std::unique_ptr<llvm::Module> module,
                                         std::unique_ptr<llvm::LLVMContext> context);

  // Loads already-compiled object bytes (from the cache) and looks up `symbol`. No LLVM
  // optimization or codegen runs. The same check as Compile, before the JIT linker sees the
  // bytes: InvalidArgument (not an object), NotFound (`symbol` not defined),
  // FailedPrecondition (the rule of kernel_object_check.h).
  absl::StatusOr<CompiledObject> Load(std::string_view object_bytes, std::string_view symbol);

  const CodegenTarget& target() const { return target_; }
  // The undefined symbols objects may reference: kAllowedUndefinedSymbols and the runtime
  // symbols.
  const std::vector<std::string>& allowed_symbols() const { return allowed_; }
  // Number of Compile calls that ran codegen, and their total optimize + codegen time.
  int64_t codegen_runs() const { return codegen_runs_.load(std::memory_order_relaxed); }
  absl::Duration compile_time() const {
    return absl::Nanoseconds(compile_nanos_.load(std::memory_order_relaxed));
  }
  int64_t loads() const { return loads_.load(std::memory_order_relaxed); }

  struct Jit;  // implementation detail (orc_engine.cc), shared with loaded KernelHandles

 private:
  OrcEngine(const CodegenTarget& target, std::shared_ptr<Jit> jit,
            std::vector<std::string> allowed);
  absl::StatusOr<CompiledObject> LoadObject(std::string object, std::string_view symbol);

  CodegenTarget target_;
  std::shared_ptr<Jit> jit_;
  std::vector<std::string> allowed_;
  std::atomic<int64_t> codegen_runs_{0};
  std::atomic<int64_t> compile_nanos_{0};
  std::atomic<int64_t> loads_{0};
};

}  // namespace pto::jit

#endif  // PTO_JIT_ORC_ORC_ENGINE_H_
