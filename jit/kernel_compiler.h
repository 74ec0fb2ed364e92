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
#include "cache/kernel_store.h"
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
  // `store` (may be null) persists object code: a kernel found there is loaded into ORC without
  // running LLVM's optimizer or code generator. It must outlive the compiler.
  static absl::StatusOr<std::unique_ptr<KernelCompiler>> Create(const device::DeviceInfo& device,
                                                                cache::CacheStore* store = nullptr);
  ~KernelCompiler();

  // The kernel's symbol name is derived from its description; `kernel.name` is its prefix.
  absl::StatusOr<std::shared_ptr<const CompiledKernel>> Compile(const ir::Kernel& kernel);
  // Textual forms for `pto dump`: LLVM IR before/after optimization, and assembly.
  absl::StatusOr<std::string> EmitLlvmIr(const ir::Kernel& kernel, bool optimized);
  absl::StatusOr<std::string> EmitAssembly(const ir::Kernel& kernel);

  int64_t codegen_runs() const { return codegen_runs_.load(); }
  // Kernels loaded from the cache's object code (no codegen).
  int64_t cache_loads() const { return cache_loads_.load(); }
  const device::DeviceInfo& device() const { return device_; }
  // Undefined symbols a kernel object may reference.
  static const std::vector<std::string>& AllowedExternalSymbols();

 private:
  struct Impl;
  explicit KernelCompiler(const device::DeviceInfo& device, std::unique_ptr<Impl> impl);
  // The kernel with its symbol name: its prefix plus a hash of `description`.
  ir::Kernel Named(const ir::Kernel& kernel, const std::string& description) const;
  cache::KernelKeyParts KeyParts(const std::string& description) const;
  // A kernel from the store's object code, or nullptr on a miss (or an unusable record).
  std::shared_ptr<CompiledKernel> LoadCached(const cache::KernelKeyParts& key,
                                             const std::string& symbol);

  device::DeviceInfo device_;
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
  std::map<std::string, std::weak_ptr<const CompiledKernel>> memo_;
  std::atomic<int64_t> codegen_runs_{0};
  std::atomic<int64_t> cache_loads_{0};
};

}  // namespace pto::jit

#endif  // PTO_JIT_KERNEL_COMPILER_H_
