// What a Runtime owns: the device description, the thread arena, the kernel cache and compiler,
// the log.
#ifndef PTO_JIT_RUNTIME_IMPL_H_
#define PTO_JIT_RUNTIME_IMPL_H_

#include <memory>

#include "cache/kernel_store.h"
#include "device/device_info.h"
#include "device/thread_arena.h"
#include "jit/kernel_compiler.h"
#include "jit/logger.h"
#include "pto/options.h"
#include "pto/runtime.h"

namespace pto::detail {

class RuntimeImpl {
 public:
  RuntimeImpl(RuntimeOptions options, device::DeviceInfo device,
              std::unique_ptr<cache::CacheStore> store,
              std::unique_ptr<jit::KernelCompiler> compiler);

  const RuntimeOptions& options() const { return options_; }
  const device::DeviceInfo& device() const { return device_; }
  device::ThreadArena* threads() { return threads_.get(); }
  jit::KernelCompiler& compiler() { return *compiler_; }
  cache::CacheStore& store() { return *store_; }
  const jit::Logger& logger() const { return logger_; }
  RuntimeStats stats() const;

 private:
  RuntimeOptions options_;
  device::DeviceInfo device_;
  std::unique_ptr<cache::CacheStore> store_;  // outlives the compiler that uses it
  std::unique_ptr<jit::KernelCompiler> compiler_;
  std::unique_ptr<device::ThreadArena> threads_;  // null when intra_op_threads == 1
  jit::Logger logger_;
};

}  // namespace pto::detail

#endif  // PTO_JIT_RUNTIME_IMPL_H_
