#include "jit/kernel_compiler.h"

#include <chrono>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include "absl/strings/str_cat.h"
#include "jit/codegen/codegen_target.h"
#include "jit/codegen/emit_kernel.h"
#include "jit/graph/siphash.h"
#include "jit/orc/object_code.h"
#include "jit/orc/orc_engine.h"

namespace pto::jit {

struct KernelCompiler::Impl {
  CodegenTarget target;
  std::unique_ptr<OrcEngine> engine;
};

namespace {

// The description that identifies a kernel's code: its whole tile IR (config included) and the
// codegen target. Two kernels with one description are one kernel.
std::string Description(const ir::Kernel& kernel, const CodegenTarget& target) {
  ir::Kernel unnamed = kernel;
  unnamed.name.clear();
  return absl::StrCat(target.cpu_name, "|", target.features, "|abi", kKernelAbiVersion, "|",
                      ir::KernelToString(unnamed, {}));
}

}  // namespace

KernelCompiler::KernelCompiler(const device::DeviceInfo& device, std::unique_ptr<Impl> impl)
    : device_(device), impl_(std::move(impl)) {}
KernelCompiler::~KernelCompiler() = default;

absl::StatusOr<std::unique_ptr<KernelCompiler>> KernelCompiler::Create(
    const device::DeviceInfo& device) {
  auto impl = std::make_unique<Impl>();
  impl->target = CodegenTarget::FromDevice(device);
  absl::StatusOr<std::unique_ptr<OrcEngine>> engine = OrcEngine::Create(impl->target);
  if (!engine.ok()) return engine.status();
  impl->engine = *std::move(engine);
  return std::unique_ptr<KernelCompiler>(new KernelCompiler(device, std::move(impl)));
}

const std::vector<std::string>& KernelCompiler::AllowedExternalSymbols() {
  static const std::vector<std::string> symbols(kAllowedUndefinedSymbols.begin(),
                                                kAllowedUndefinedSymbols.end());
  return symbols;
}

ir::Kernel KernelCompiler::Named(const ir::Kernel& kernel) const {
  ir::Kernel named = kernel;
  const std::string description = Description(kernel, impl_->target);
  static constexpr std::array<uint8_t, 16> kKey = {'p', 't', 'o', '-', 'k', 'e', 'r', 'n',
                                                   'e', 'l', '-', 'n', 'a', 'm', 'e', '1'};
  const std::array<uint64_t, 2> h = graph::SipHash128(kKey, description);
  named.name = absl::StrCat(kernel.name.empty() ? "f32_kernel" : kernel.name, "_",
                            device::IsaName(device_.isa), "_", absl::Hex(h[0], absl::kZeroPad16));
  return named;
}

absl::StatusOr<std::shared_ptr<const CompiledKernel>> KernelCompiler::Compile(
    const ir::Kernel& kernel) {
  const std::string key = Description(kernel, impl_->target);
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = memo_.find(key); it != memo_.end()) {
    if (std::shared_ptr<const CompiledKernel> live = it->second.lock()) return live;
  }
  const ir::Kernel named = Named(kernel);
  const auto start = std::chrono::steady_clock::now();
  auto context = std::make_unique<llvm::LLVMContext>();
  absl::StatusOr<std::unique_ptr<llvm::Module>> module = EmitKernel(named, impl_->target, *context);
  if (!module.ok()) return module.status();
  absl::StatusOr<CompiledObject> object = impl_->engine->Compile(*std::move(module), std::move(context));
  if (!object.ok()) return object.status();
  codegen_runs_.fetch_add(1);
  auto holder = std::make_shared<KernelHandle>(std::move(object->handle));
  auto compiled = std::make_shared<CompiledKernel>();
  compiled->fn = object->entry;
  compiled->symbol = object->symbol;
  compiled->object = std::move(object->object);
  compiled->compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  compiled->code = holder;
  memo_[key] = compiled;
  return std::shared_ptr<const CompiledKernel>(std::move(compiled));
}

absl::StatusOr<std::string> KernelCompiler::EmitLlvmIr(const ir::Kernel& kernel, bool optimized) {
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module = EmitKernel(Named(kernel), impl_->target, context);
  if (!module.ok()) return module.status();
  if (optimized) return EmitOptimizedIR(**module, impl_->target);
  std::string text;
  llvm::raw_string_ostream os(text);
  (*module)->print(os, nullptr);
  return text;
}

absl::StatusOr<std::string> KernelCompiler::EmitAssembly(const ir::Kernel& kernel) {
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module = EmitKernel(Named(kernel), impl_->target, context);
  if (!module.ok()) return module.status();
  return jit::EmitAssembly(**module, impl_->target);
}

}  // namespace pto::jit
