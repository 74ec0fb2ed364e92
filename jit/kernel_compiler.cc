#include "jit/kernel_compiler.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "cache/checksum.h"
#include "jit/codegen/bounds_fault.h"
#include "jit/codegen/codegen_target.h"
#include "jit/codegen/emit_kernel.h"
#include "jit/kernel_symbol.h"
#include "jit/orc/object_code.h"
#include "jit/orc/orc_engine.h"

namespace pto::jit {

struct KernelCompiler::Impl {
  CodegenTarget target;
  CodegenOptions codegen;
  LogSink log;
  std::unique_ptr<OrcEngine> engine;
  cache::CacheStore* store = nullptr;
  std::string compiler_fingerprint;
  bool codegen_warmed_up = false;  // guarded by KernelCompiler::mu_
  double setup_seconds = 0;        // the engine, and the code generator's first run
};

namespace {

// The description that identifies a kernel's code: its whole tile IR (config included), the
// codegen target and options. Two kernels with one description are one kernel. The plan's
// grain (tile_rows, tile_cols) is scheduling, not code: the tuner changes it without a
// recompile. A checked kernel's code also depends on its buffers' extents and names.
std::string Description(const ir::Kernel& kernel, const CodegenTarget& target,
                        const CodegenOptions& options) {
  ir::Kernel unnamed = kernel;
  unnamed.name.clear();
  unnamed.config.tile_rows = 0;
  unnamed.config.tile_cols = 0;
  std::string description = absl::StrCat(target.cpu_name, "|", target.features, "|abi",
                                         kKernelAbiVersion, "|", ir::KernelToString(unnamed, {}));
  if (options.bounds_checks) {
    absl::StrAppend(&description, "|checked");
    for (const ir::BufferExtent& e : kernel.buffer_extents) {
      absl::StrAppend(&description, "|", e.elements.ToString(), " ", e.name);
    }
  }
  return description;
}

// `void pto_codegen_warmup(float* a, int64_t n)`: a[i] = a[i] * 2 + 1 for i < n. A loop the
// optimizer vectorizes, so that compiling it runs every part of the pipeline once.
std::unique_ptr<llvm::Module> WarmUpModule(llvm::LLVMContext& context,
                                           const CodegenTarget& target) {
  auto module = std::make_unique<llvm::Module>("pto_codegen_warmup", context);
  module->setTargetTriple(target.triple);
  llvm::IRBuilder<> b(context);
  llvm::FunctionType* type =
      llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getInt64Ty()}, false);
  llvm::Function* f = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                             "pto_codegen_warmup", module.get());
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", f);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(context, "loop", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "done", f);
  llvm::Value* a = f->getArg(0);
  llvm::Value* n = f->getArg(1);
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(n, b.getInt64(0)), loop, done);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(b.getInt64(0), entry);
  llvm::Value* p = b.CreateGEP(b.getFloatTy(), a, i);
  llvm::Value* x = b.CreateLoad(b.getFloatTy(), p);
  b.CreateStore(b.CreateFAdd(b.CreateFMul(x, llvm::ConstantFP::get(b.getFloatTy(), 2.0)),
                             llvm::ConstantFP::get(b.getFloatTy(), 1.0)),
                p);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, n), loop, done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return module;
}

}  // namespace

KernelCompiler::KernelCompiler(const device::DeviceInfo& device, std::unique_ptr<Impl> impl)
    : device_(device), impl_(std::move(impl)) {}
KernelCompiler::~KernelCompiler() = default;

absl::StatusOr<std::unique_ptr<KernelCompiler>> KernelCompiler::Create(
    const device::DeviceInfo& device, cache::CacheStore* store) {
  KernelCompilerOptions options;
  options.store = store;
  return Create(device, options);
}

absl::StatusOr<std::unique_ptr<KernelCompiler>> KernelCompiler::Create(
    const device::DeviceInfo& device, const KernelCompilerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->target = CodegenTarget::FromDevice(device);
  impl->codegen.bounds_checks = options.checked_kernels;
  impl->log = options.log;
  impl->store = options.store;
  impl->compiler_fingerprint =
      options.compiler_fingerprint.empty()
          ? cache::CompilerFingerprint(kKernelAbiVersion, LLVM_VERSION_STRING,
                                       absl::StrCat("O2 codegen=", kCodegenRevision,
                                                    options.checked_kernels ? " checked" : ""))
          : options.compiler_fingerprint;
  // The bounds-fault handler exists for checked kernels only: an unchecked engine refuses
  // objects that call it.
  OrcEngineOptions engine_options;
  if (options.checked_kernels) {
    engine_options.runtime_symbols.push_back({kBoundsFaultSymbol, BoundsFaultAddress()});
  }
  // The LLJIT and the target are set up here, once: no kernel's timing includes them.
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<OrcEngine>> engine =
      OrcEngine::Create(impl->target, engine_options);
  if (!engine.ok()) return engine.status();
  impl->engine = *std::move(engine);
  impl->setup_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::unique_ptr<KernelCompiler>(new KernelCompiler(device, std::move(impl)));
}

const std::vector<std::string>& KernelCompiler::AllowedExternalSymbols() const {
  return impl_->engine->allowed_symbols();
}

bool KernelCompiler::checked_kernels() const { return impl_->codegen.bounds_checks; }

ir::Kernel KernelCompiler::Named(const ir::Kernel& kernel, const std::string& description) const {
  ir::Kernel named = kernel;
  static constexpr std::array<uint8_t, 16> kKey = {'p', 't', 'o', '-', 'k', 'e', 'r', 'n',
                                                   'e', 'l', '-', 'n', 'a', 'm', 'e', '1'};
  const std::array<uint64_t, 2> h = cache::SipHash128(kKey, description);
  named.name = KernelSymbol(kernel, device_.isa, impl_->target.f32_lanes(), h[0],
                            impl_->codegen.bounds_checks);
  return named;
}

std::string KernelCompiler::SymbolOf(const ir::Kernel& kernel) const {
  return Named(kernel, Description(kernel, impl_->target, impl_->codegen)).name;
}

cache::KernelKeyParts KernelCompiler::KeyParts(const std::string& description) const {
  cache::KernelKeyParts parts;
  parts.kernel_description = description;
  parts.codegen_fingerprint = device_.CodegenFingerprint();
  parts.compiler_fingerprint = impl_->compiler_fingerprint;
  return parts;
}

void KernelCompiler::WarmUpCodegen() {
  std::lock_guard<std::mutex> lock(warm_mu_);
  if (impl_->codegen_warmed_up) return;
  impl_->codegen_warmed_up = true;
  const auto start = std::chrono::steady_clock::now();
  auto context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module = WarmUpModule(*context, impl_->target);
  // The code is dropped at once; a failure here shows again in the real compile.
  (void)impl_->engine->Compile(std::move(module), std::move(context));
  impl_->setup_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double KernelCompiler::setup_seconds() const {
  std::lock_guard<std::mutex> lock(warm_mu_);
  return impl_->setup_seconds;
}

const std::string& KernelCompiler::compiler_fingerprint() const {
  return impl_->compiler_fingerprint;
}

std::vector<KernelEvent> KernelCompiler::events() const {
  std::lock_guard<std::mutex> lock(events_mu_);
  return events_;
}

void KernelCompiler::Record(const CompiledKernel& kernel, const KernelOrigin& origin, bool loaded) {
  KernelEvent event;
  event.kernel = kernel.symbol;
  event.function = origin.graph_name;
  event.shape_class = origin.shape_class;
  event.loaded_from_cache = loaded;
  event.seconds = kernel.compile_seconds;
  std::lock_guard<std::mutex> lock(events_mu_);
  events_.push_back(std::move(event));
}

void KernelCompiler::Trace(const CompiledKernel& kernel, const KernelOrigin& origin,
                           EventCategory category) {
  Timeline* timeline = timeline_.load(std::memory_order_acquire);
  if (timeline == nullptr) return;
  const auto end = std::chrono::steady_clock::now();
  const auto begin = end - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                               std::chrono::duration<double>(kernel.compile_seconds));
  timeline->Add(kernel.symbol, category, begin, end,
                {{"function", origin.graph_name}, {"shape class", origin.shape_class}});
}

std::shared_ptr<CompiledKernel> KernelCompiler::LoadCached(const cache::KernelKeyParts& key,
                                                           const std::string& symbol) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::optional<proto::KernelRecord>> record = impl_->store->GetKernel(key);
  if (!record.ok() || !record->has_value() || (*record)->symbol() != symbol) return nullptr;
  absl::StatusOr<CompiledObject> object = impl_->engine->Load((*record)->object(), symbol);
  if (!object.ok()) {
    // E.g. an object that breaks the kernel object rule (a symbol off the allow-list, a
    // definition that would interpose on the process): never loaded; compiled again, and the
    // record rewritten with the new code.
    if (impl_->log) {
      impl_->log(LogLevel::kWarning,
                 absl::StrCat("pto: the cache's code for kernel ", symbol, " was not loaded (",
                              object.status().ToString(), "); compiling it again"));
    }
    return nullptr;
  }
  cache_loads_.fetch_add(1);
  auto compiled = std::make_shared<CompiledKernel>();
  compiled->fn = object->entry;
  compiled->symbol = object->symbol;
  compiled->object = std::move(object->object);
  compiled->code = std::make_shared<KernelHandle>(std::move(object->handle));
  compiled->loaded_from_cache = true;
  compiled->compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return compiled;
}

void KernelCompiler::Store(const cache::KernelKeyParts& parts, const CompiledKernel& compiled,
                           const KernelOrigin& origin) {
  if (impl_->store == nullptr) return;
  proto::KernelRecord record;
  record.set_symbol(compiled.symbol);
  record.set_object(compiled.object);
  record.set_kernel_description(parts.kernel_description);
  record.set_codegen_fingerprint(parts.codegen_fingerprint);
  record.set_compiler_fingerprint(parts.compiler_fingerprint);
  record.set_compile_seconds(compiled.compile_seconds);
  record.set_graph_name(origin.graph_name);
  record.set_shape_class(origin.shape_class);
  record.set_dtype(origin.dtype);
  // A store that cannot take the record leaves the kernel usable; the store logs why.
  (void)impl_->store->PutKernel(record);
}

void KernelCompiler::Persist(const ir::Kernel& kernel, const CompiledKernel& compiled,
                             const KernelOrigin& origin) {
  if (compiled.loaded_from_cache) return;
  Store(KeyParts(Description(kernel, impl_->target, impl_->codegen)), compiled, origin);
}

void KernelCompiler::SweepMemo() {
  if (memo_.size() < memo_sweep_at_) return;
  std::erase_if(memo_, [](const auto& entry) { return entry.second.expired(); });
  memo_sweep_at_ = std::max<size_t>(64, 2 * memo_.size());
}

size_t KernelCompiler::memo_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return memo_.size();
}

absl::StatusOr<std::shared_ptr<const CompiledKernel>> KernelCompiler::Compile(
    const ir::Kernel& kernel, const KernelOrigin& origin, bool persist) {
  const std::string key = Description(kernel, impl_->target, impl_->codegen);
  {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (auto it = memo_.find(key); it != memo_.end()) {
        if (std::shared_ptr<const CompiledKernel> live = it->second.lock()) return live;
      }
      if (!in_flight_.contains(key)) break;
      in_flight_done_.wait(lock);
    }
    in_flight_.insert(key);
  }
  absl::StatusOr<std::shared_ptr<CompiledKernel>> compiled =
      CompileNew(kernel, key, origin, persist);
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_.erase(key);
  in_flight_done_.notify_all();
  if (!compiled.ok()) return compiled.status();
  SweepMemo();
  memo_[key] = *compiled;
  return std::shared_ptr<const CompiledKernel>(*std::move(compiled));
}

absl::StatusOr<std::shared_ptr<CompiledKernel>> KernelCompiler::CompileNew(
    const ir::Kernel& kernel, const std::string& key, const KernelOrigin& origin, bool persist) {
  const ir::Kernel named = Named(kernel, key);
  const cache::KernelKeyParts parts = KeyParts(key);
  const std::string cache_key = cache::KernelKey(parts);
  // Object code from a store other users can write to is never loaded (the store warned).
  if (impl_->store != nullptr && impl_->store->code_trusted()) {
    if (std::shared_ptr<CompiledKernel> cached = LoadCached(parts, named.name)) {
      cached->cache_key = cache_key;
      Record(*cached, origin, /*loaded=*/true);
      Trace(*cached, origin, EventCategory::kCacheLoad);
      return cached;
    }
  }
  WarmUpCodegen();  // untimed: LLVM's one-time initialization is no kernel's compile time
  const auto start = std::chrono::steady_clock::now();
  auto context = std::make_unique<llvm::LLVMContext>();
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      EmitKernel(named, impl_->target, impl_->codegen, *context);
  if (!module.ok()) return module.status();
  absl::StatusOr<CompiledObject> object =
      impl_->engine->Compile(*std::move(module), std::move(context));
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
  compiled->cache_key = cache_key;
  Record(*compiled, origin, /*loaded=*/false);
  Trace(*compiled, origin, persist ? EventCategory::kCompile : EventCategory::kTune);
  if (persist) Store(parts, *compiled, origin);
  return compiled;
}

absl::StatusOr<std::string> KernelCompiler::EmitLlvmIr(const ir::Kernel& kernel, bool optimized) {
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      EmitKernel(Named(kernel, Description(kernel, impl_->target, impl_->codegen)), impl_->target,
                 impl_->codegen, context);
  if (!module.ok()) return module.status();
  if (optimized) return EmitOptimizedIR(**module, impl_->target);
  std::string text;
  llvm::raw_string_ostream os(text);
  (*module)->print(os, nullptr);
  return text;
}

absl::StatusOr<std::string> KernelCompiler::EmitAssembly(const ir::Kernel& kernel) {
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      EmitKernel(Named(kernel, Description(kernel, impl_->target, impl_->codegen)), impl_->target,
                 impl_->codegen, context);
  if (!module.ok()) return module.status();
  return jit::EmitAssembly(**module, impl_->target);
}

}  // namespace pto::jit
