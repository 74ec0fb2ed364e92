// Level 5 behind an LLVM-free interface: tile kernels to native code with LLVM ORC, memoized
// in process by the kernel's full description (so a kernel shared by several shape classes or
// Functions is compiled once).
#ifndef PTO_JIT_KERNEL_COMPILER_H_
#define PTO_JIT_KERNEL_COMPILER_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "device/device_info.h"
#include "jit/ir/tile_ir.h"
#include "jit/kernel_abi.h"

namespace pto::jit {

struct CompiledKernel {
  pto_kernel_fn fn = nullptr;
  std::string symbol;
  std::string object;  // the relocatable object file the code was loaded from
  double compile_seconds = 0;
  std::shared_ptr<const void> code;  // frees the code in the JIT when the last user lets go
};

class KernelCompiler {
 public:
  static absl::StatusOr<std::unique_ptr<KernelCompiler>> Create(const device::DeviceInfo& device);
  ~KernelCompiler();

  // The kernel's symbol name is derived from its description; `kernel.name` is its prefix.
  absl::StatusOr<std::shared_ptr<const CompiledKernel>> Compile(const ir::Kernel& kernel);
  // Textual forms for `pto dump`: LLVM IR before/after optimization, and assembly.
  absl::StatusOr<std::string> EmitLlvmIr(const ir::Kernel& kernel, bool optimized);
  absl::StatusOr<std::string> EmitAssembly(const ir::Kernel& kernel);

  int64_t codegen_runs() const { return codegen_runs_.load(); }
  const device::DeviceInfo& device() const { return device_; }
  // Undefined symbols a kernel object may reference.
  static const std::vector<std::string>& AllowedExternalSymbols();

 private:
  struct Impl;
  explicit KernelCompiler(const device::DeviceInfo& device, std::unique_ptr<Impl> impl);
  ir::Kernel Named(const ir::Kernel& kernel) const;

  device::DeviceInfo device_;
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
  std::map<std::string, std::weak_ptr<const CompiledKernel>> memo_;
  std::atomic<int64_t> codegen_runs_{0};
};

}  // namespace pto::jit

#endif  // PTO_JIT_KERNEL_COMPILER_H_
