// Level 5 behind an LLVM-free interface: tile kernels to native code with LLVM ORC, memoized
// in process by the kernel's full description (so a kernel shared by several shape classes or
// Functions is compiled once), persisted in a cache::CacheStore (object code loaded on a hit
// when the store's code is trusted), with a timing event per kernel compiled or loaded.
#ifndef PTO_JIT_KERNEL_COMPILER_H_
#define PTO_JIT_KERNEL_COMPILER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cache/cache_store.h"
#include "device/device_info.h"
#include "jit/ir/tile_ir.h"
#include "jit/kernel_abi.h"
#include "jit/timeline.h"
#include "pto/runtime.h"

namespace pto::jit {

struct CompiledKernel {
  pto_kernel_fn fn = nullptr;
  std::string symbol;
  std::string object;     // the relocatable object file the code was loaded from
  std::string cache_key;  // cache::KernelKey of its key parts
  bool loaded_from_cache = false;
  double compile_seconds = 0;        // compiling it (cold) or loading it from the cache (warm)
  std::shared_ptr<const void> code;  // frees the code in the JIT when the last user lets go
};

// Where a kernel is needed: written into its cache record (informational, not part of the
// key) and into its timing event.
struct KernelOrigin {
  std::string graph_name;   // the Function's name
  std::string shape_class;  // the shape class as people read it (declared dims by name)
  std::string dtype = "f32";
};

struct KernelCompilerOptions {
  // Persists object code (may be null): a kernel found there is loaded into ORC without
  // running LLVM's optimizer or code generator, unless the store's code is not trusted
  // (CacheStore::code_trusted()), in which case it is compiled (and its record rewritten).
  // Must outlive the compiler.
  cache::CacheStore* store = nullptr;
  // Replaces this build's compiler fingerprint in kernel keys (tests of a pto or LLVM
  // upgrade). Empty: CompilerFingerprint(kKernelAbiVersion, LLVM's version, "O2 codegen=N",
  // plus " checked" for checked kernels).
  std::string compiler_fingerprint;
  // Checked kernels (RuntimeOptions::checked_kernels, CodegenOptions::bounds_checks): every
  // load and store is tested against its buffer's extent (ir::Kernel::buffer_extents). Their
  // symbols end in "_checked" (after the hash), and their description (so their memo and cache
  // keys) and the compiler fingerprint say so: a checked and an unchecked kernel never share a key.
  bool checked_kernels = false;
  // Where warnings go (stored code refused, ...); may be empty.
  LogSink log;
};

class KernelCompiler {
 public:
  // Sets up LLVM and the JIT engine (once, here: no timed compile includes it).
  static absl::StatusOr<std::unique_ptr<KernelCompiler>> Create(const device::DeviceInfo& device,
                                                                cache::CacheStore* store = nullptr);
  static absl::StatusOr<std::unique_ptr<KernelCompiler>> Create(
      const device::DeviceInfo& device, const KernelCompilerOptions& options);
  ~KernelCompiler();

  // The kernel's symbol is SymbolOf(kernel); `kernel.name` is its prefix.
  // With `persist` false the object code is not written to the store (tuning candidates: most
  // lose; the winner is written with Persist).
  absl::StatusOr<std::shared_ptr<const CompiledKernel>> Compile(const ir::Kernel& kernel,
                                                                const KernelOrigin& origin = {},
                                                                bool persist = true);
  // Writes a kernel compiled with persist = false to the store (no-op without a store or
  // when it was loaded from it).
  void Persist(const ir::Kernel& kernel, const CompiledKernel& compiled,
               const KernelOrigin& origin);
  // The symbol Compile gives `kernel` (jit/kernel_symbol.h: its name, tile shape and ISA, and
  // a hash of its description: the whole tile IR but the plan's grain, the target, and whether
  // it is checked), without compiling it.
  std::string SymbolOf(const ir::Kernel& kernel) const;
  // Kernels in the in-process memo (live or not yet swept): bounded by about twice the live
  // kernels, however many tuning candidates came and went.
  size_t memo_size() const;
  // Textual forms for `pto dump`: LLVM IR before/after optimization, and assembly.
  absl::StatusOr<std::string> EmitLlvmIr(const ir::Kernel& kernel, bool optimized);
  absl::StatusOr<std::string> EmitAssembly(const ir::Kernel& kernel);

  // Kernels compiled with LLVM code generation (EmitLlvmIr and EmitAssembly are not counted).
  int64_t codegen_runs() const { return codegen_runs_.load(); }
  // Kernels loaded from the cache's object code (no codegen).
  int64_t cache_loads() const { return cache_loads_.load(); }
  // Seconds of one-time LLVM set-up, in no kernel's time: creating the engine, and compiling a
  // small loop before the first kernel compile (LLVM initializes parts of its optimizer and
  // code generator on first use; a process that only loads kernels never pays for it).
  double setup_seconds() const;
  // Every kernel compiled or loaded, in order (memo hits are not events).
  std::vector<KernelEvent> events() const;
  const std::string& compiler_fingerprint() const;
  const device::DeviceInfo& device() const { return device_; }
  // Undefined symbols a kernel object may reference (the JIT engine's allowed_symbols()).
  const std::vector<std::string>& AllowedExternalSymbols() const;
  bool checked_kernels() const;
  // While not null, each kernel compiled or loaded is also an event there (compile, tune for
  // a candidate that is not persisted, cache_load), on the thread that did it. The timeline
  // must outlive its use here (the Runtime keeps every trace's).
  void SetTimeline(Timeline* timeline) { timeline_.store(timeline, std::memory_order_release); }

 private:
  struct Impl;
  explicit KernelCompiler(const device::DeviceInfo& device, std::unique_ptr<Impl> impl);
  // The kernel with its symbol as name (KernelSymbol, with a hash of `description`).
  ir::Kernel Named(const ir::Kernel& kernel, const std::string& description) const;
  cache::KernelKeyParts KeyParts(const std::string& description) const;
  // A kernel from the store's object code, or nullptr on a miss (or an unusable record).
  std::shared_ptr<CompiledKernel> LoadCached(const cache::KernelKeyParts& key,
                                             const std::string& symbol);
  void Record(const CompiledKernel& kernel, const KernelOrigin& origin, bool loaded);
  void Trace(const CompiledKernel& kernel, const KernelOrigin& origin, EventCategory category);
  void Store(const cache::KernelKeyParts& parts, const CompiledKernel& compiled,
             const KernelOrigin& origin);
  // Drops memo entries whose kernels were freed, when the memo has doubled since the last sweep.
  void SweepMemo();
  // Before the first compile (the others wait for it; see setup_seconds()). Not a codegen run.
  void WarmUpCodegen();
  // Compile's work for a kernel not in the memo, outside mu_ (compiles of different kernels
  // run in parallel; each has its own LLVM context and target machine).
  absl::StatusOr<std::shared_ptr<CompiledKernel>> CompileNew(const ir::Kernel& kernel,
                                                             const std::string& key,
                                                             const KernelOrigin& origin,
                                                             bool persist);

  device::DeviceInfo device_;
  std::unique_ptr<Impl> impl_;
  mutable std::mutex mu_;  // guards memo_, in_flight_, memo_sweep_at_
  std::map<std::string, std::weak_ptr<const CompiledKernel>> memo_;
  // Descriptions being compiled now: a second Compile of one waits for the first's result.
  std::set<std::string> in_flight_;
  std::condition_variable in_flight_done_;
  mutable std::mutex warm_mu_;  // guards the warm-up and setup_seconds
  size_t memo_sweep_at_ = 64;   // memo size at which expired entries are dropped next
  std::atomic<int64_t> codegen_runs_{0};
  std::atomic<int64_t> cache_loads_{0};
  mutable std::mutex events_mu_;
  std::vector<KernelEvent> events_;
  std::atomic<Timeline*> timeline_{nullptr};
};

}  // namespace pto::jit

#endif  // PTO_JIT_KERNEL_COMPILER_H_
