// The public Runtime and Function: thin forwarding to their Impl classes.
#include "pto/runtime.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "jit/callback_guard.h"
#include "jit/function_impl.h"
#include "jit/passes/differentiate.h"
#include "jit/passes/recompute_cheap_values.h"
#include "jit/passes/recompute_checkpoints.h"
#include "jit/runtime_impl.h"
#include "oneapi/tbb/global_control.h"

namespace pto {
namespace detail {

RuntimeImpl::RuntimeImpl(RuntimeOptions options, device::DeviceInfo device,
                         std::unique_ptr<cache::CacheStore> store,
                         std::unique_ptr<jit::KernelCompiler> compiler)
    : options_(std::move(options)),
      device_(std::move(device)),
      store_(std::move(store)),
      compiler_(std::move(compiler)),
      logger_(options_.log_sink, options_.log_level) {
  int threads = options_.intra_op_threads > 0 ? options_.intra_op_threads : device_.cores;
  if (threads > 1) {
    const ThreadPinning pinning = options_.thread_pinning;
    const bool pin =
        pinning == ThreadPinning::kAlways ||
        (pinning == ThreadPinning::kAuto && threads == device::ThreadArena::AllowedCpuCount());
    threads_ = device::ThreadArena::Shared(threads, pin);
  }
  intra_op_threads_ = std::max(1, threads);
  performance_fingerprint_ = device_.PerformanceFingerprint(intra_op_threads_);
  if (options_.tuning.mode != TuningMode::kOff && !options_.deterministic) {
    // Blocking tuning (warm-up: nothing else runs) times candidates on as many threads as calls
    // use. Background tuning times them on the tuner's own idle-priority thread, so it never
    // takes the callers' cores; it tunes the per-thread code, not the parallel split.
    if (options_.tuning.mode == TuningMode::kBlocking && threads > 1) {
      tuning_threads_ = std::make_unique<device::ThreadArena>(threads);
    }
    const size_t workers =
        tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
    tuner_workers_ = std::make_shared<tbb::global_control>(
        tbb::global_control::max_allowed_parallelism,
        workers + static_cast<size_t>(std::max(1, options_.tuning.threads)));
    tuner::ServiceOptions service;
    service.threads = std::max(1, options_.tuning.threads);
    service.seconds_total = options_.tuning.seconds_total;
    service.seconds_per_job = options_.tuning.seconds_per_kernel;
    // Idle priority keeps background tuning out of the callers' way; a blocking run's caller
    // waits for the tuner, which must not wait for every other process on the machine.
    service.idle_priority = options_.tuning.mode == TuningMode::kBackground;
    tuning_service_ = std::make_unique<tuner::TuningService>(service);
  }
}

RuntimeImpl::~RuntimeImpl() {
  if (tuning_service_ != nullptr) tuning_service_->Shutdown();
}

int RuntimeImpl::AddTuning(const KernelTuning& initial) {
  std::lock_guard<std::mutex> lock(tuning_mu_);
  tuning_.push_back(initial);
  const int index = static_cast<int>(tuning_.size()) - 1;
  tuning_[index].kernel_index = index;
  for (KernelTuning& t : tuning_) t.kernels_queued = static_cast<int>(tuning_.size());
  return index;
}

void RuntimeImpl::UpdateTuning(int index, KernelTuning state) {
  KernelTuning copy;
  {
    std::lock_guard<std::mutex> lock(tuning_mu_);
    state.kernel_index = index;
    state.kernels_queued = static_cast<int>(tuning_.size());
    tuning_[index] = std::move(state);
    copy = tuning_[index];
  }
  if (!options_.tuning.progress) return;
  const CallbackScope scope(CallbackKind::kTuningProgress);
  options_.tuning.progress(copy);
}

std::vector<KernelTuning> RuntimeImpl::tuning_results() const {
  std::lock_guard<std::mutex> lock(tuning_mu_);
  return tuning_;
}

void RuntimeImpl::AddFunction(FunctionImpl* fn) {
  std::lock_guard<std::mutex> lock(functions_mu_);
  functions_.push_back(fn);
}

void RuntimeImpl::RemoveFunction(FunctionImpl* fn) {
  std::vector<proto::WorkloadEntry> entries;
  if (options_.record_workload) entries = fn->Workload();
  std::lock_guard<std::mutex> lock(functions_mu_);
  std::erase(functions_, fn);
  for (proto::WorkloadEntry& e : entries) removed_workload_.push_back(std::move(e));
}

absl::Status RuntimeImpl::WriteWorkload(const std::string& path) const {
  if (absl::Status s = RefuseInsideCallback("Runtime::WriteWorkload was called"); !s.ok()) {
    return s;
  }
  if (!options_.record_workload) {
    return absl::FailedPreconditionError(
        "the workload is not recorded: open the Runtime with RuntimeOptions::record_workload");
  }
  proto::Workload workload;
  workload.set_schema_version(1);
  workload.set_description("recorded by a pto Runtime");
  {
    std::lock_guard<std::mutex> lock(functions_mu_);
    for (const proto::WorkloadEntry& e : removed_workload_) *workload.add_entries() = e;
    for (const FunctionImpl* fn : functions_) {
      for (proto::WorkloadEntry& e : fn->Workload()) *workload.add_entries() = std::move(e);
    }
  }
  // Entry names are unique in a workload: a second Function of one name gets a suffix.
  std::map<std::string, int> seen;
  for (proto::WorkloadEntry& e : *workload.mutable_entries()) {
    if (const int n = seen[e.name()]++; n > 0) e.set_name(absl::StrCat(e.name(), "~", n));
  }
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(workload, &text)) {
    return absl::InternalError("cannot print the workload");
  }
  const std::string temp = absl::StrCat(path, ".tmp.", ::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::remove(temp.c_str());
      return absl::PermissionDeniedError(absl::StrCat("cannot write ", temp));
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return absl::PermissionDeniedError(absl::StrCat("cannot replace ", path));
  }
  return absl::OkStatus();
}

absl::Status RuntimeImpl::WaitForTuning() {
  if (absl::Status s = RefuseInsideCallback("Runtime::WaitForTuning was called"); !s.ok()) {
    return s;
  }
  if (tuning_service_ != nullptr) tuning_service_->WaitIdle();
  return absl::OkStatus();
}

void RuntimeImpl::StopTuning() {
  if (tuning_service_ == nullptr) return;
  if (InsideCallback()) {
    tuning_service_->RequestShutdown();
  } else {
    tuning_service_->Shutdown();
  }
}

void RuntimeImpl::Close() {
  StopTuning();
  tuning_closed_.store(true, std::memory_order_release);
  // The tuner's threads have stopped: the process gets its oneTBB parallelism back now, not
  // when the last Function goes.
  if (!InsideCallback()) tuner_workers_.reset();
}

RuntimeStats RuntimeImpl::stats() const {
  RuntimeStats s;
  s.llvm_codegen_runs = compiler_->codegen_runs();
  s.kernels_loaded = compiler_->cache_loads();
  s.llvm_setup_seconds = compiler_->setup_seconds();
  const cache::CacheStats c = store_->stats();
  s.cache.hits = c.hits;
  s.cache.misses = c.misses;
  s.cache.corrupt = c.corrupt;
  s.cache.puts = c.puts;
  s.cache.evictions = c.evictions;
  s.cache.entries = c.entries;
  s.cache.bytes = c.bytes;
  s.cache.kernel_bytes = c.kernel_bytes;
  s.cache.role = store_->Role();
  s.cache.persistent = store_->persistent();
  s.cache.code_trusted = store_->code_trusted();
  s.cache.description = store_->Describe();
  return s;
}

}  // namespace detail

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::Open(RuntimeOptions options) {
  if (!options.log_sink) options.log_sink = jit::StderrLogSink();
  if (options.intra_op_threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "intra_op_threads must be >= 0 (0 = all cores), got ", options.intra_op_threads));
  }
  if (static_cast<int>(options.thread_pinning) > static_cast<int>(ThreadPinning::kNever)) {
    return absl::InvalidArgumentError(
        absl::StrCat("thread_pinning must be kAuto, kAlways or kNever, got ",
                     static_cast<int>(options.thread_pinning)));
  }
  device::DeviceInfo host = device::DetectHost();
  device::DeviceInfo device = host;
  switch (options.isa) {
    case TargetIsa::kHost:
      break;
    case TargetIsa::kAvx512:
      if (host.isa != device::Isa::kAvx512) {
        return absl::FailedPreconditionError(absl::StrCat(
            "isa AVX-512 requested but this CPU supports at most ", device::IsaName(host.isa)));
      }
      break;
    case TargetIsa::kAvx2:
      if (host.isa == device::Isa::kSse2) {
        return absl::FailedPreconditionError("isa AVX2 requested but this CPU has only SSE2");
      }
      device = device::RestrictIsa(host, device::Isa::kAvx2);
      break;
    case TargetIsa::kSse2:
      device = device::RestrictIsa(host, device::Isa::kSse2);
      break;
  }
  cache::CacheOptions cache_options;
  cache_options.path = options.cache_path;
  cache_options.capacity_bytes = options.cache_capacity_bytes;
  cache_options.base_path = options.cache_base_path;
  cache_options.log = [logger = jit::Logger(options.log_sink, options.log_level)](
                          int level, std::string_view message) {
    logger.Log(static_cast<LogLevel>(level), message);
  };
  absl::StatusOr<std::unique_ptr<cache::CacheStore>> store = cache::OpenCache(cache_options);
  if (!store.ok()) return store.status();
  jit::KernelCompilerOptions compiler_options;
  compiler_options.store = store->get();
  compiler_options.checked_kernels = options.checked_kernels;
  compiler_options.log = [logger = jit::Logger(options.log_sink, options.log_level)](
                             LogLevel level, std::string_view message) {
    logger.Log(level, message);
  };
  absl::StatusOr<std::unique_ptr<jit::KernelCompiler>> compiler =
      jit::KernelCompiler::Create(device, compiler_options);
  if (!compiler.ok()) return compiler.status();
  auto impl = std::make_shared<detail::RuntimeImpl>(std::move(options), std::move(device),
                                                    *std::move(store), *std::move(compiler));
  return std::unique_ptr<Runtime>(new Runtime(std::move(impl)));
}

Runtime::Runtime(std::shared_ptr<detail::RuntimeImpl> impl) : impl_(std::move(impl)) {}
// The internals live on while Functions of this Runtime do; tuning ends here.
Runtime::~Runtime() { impl_->Close(); }

absl::StatusOr<std::unique_ptr<Function>> Runtime::JitTraced(std::string name, int num_inputs,
                                                             TraceFn trace,
                                                             FunctionOptions options) {
  if (absl::Status s = detail::RefuseInsideCallback(
          absl::StrCat("Runtime::Jit of function '", name, "' was called"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = detail::ValidateFunctionOptions(num_inputs, options); !s.ok()) return s;
  return std::make_unique<Function>(std::make_unique<detail::FunctionImpl>(
      impl_, std::move(name), num_inputs, std::move(trace), std::move(options)));
}

absl::StatusOr<std::unique_ptr<Function>> Runtime::JitGradTraced(std::string name, int num_inputs,
                                                                 TraceFn trace,
                                                                 GradientOptions gradient,
                                                                 FunctionOptions options) {
  if (absl::Status s = detail::RefuseInsideCallback(
          absl::StrCat("Runtime::JitGrad of function '", name, "' was called"));
      !s.ok()) {
    return s;
  }
  if (gradient.cotangents < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("JitGrad: cotangents is ", gradient.cotangents, ", must not be negative"));
  }
  if (gradient.wrt.empty()) {
    return absl::InvalidArgumentError("JitGrad: wrt names no input to differentiate");
  }
  for (int i : gradient.wrt) {
    if (i < 0 || i >= num_inputs) {
      return absl::InvalidArgumentError(
          absl::StrCat("JitGrad: wrt input ", i, " is out of range [0, ", num_inputs, ")"));
    }
  }
  const int total = num_inputs + gradient.cotangents +
                    (gradient.accumulate ? static_cast<int>(gradient.wrt.size()) : 0);
  if (absl::Status s = detail::ValidateFunctionOptions(total, options); !s.ok()) return s;
  // The lambda sees its own inputs; the cotangents are inputs only the gradient reads.
  TraceFn lambda = [trace = std::move(trace), num_inputs](std::span<const Value> in) {
    return trace(in.first(num_inputs));
  };
  jit::GradientSpec spec;
  spec.wrt = std::move(gradient.wrt);
  spec.cotangents = gradient.cotangents;
  spec.accumulate = gradient.accumulate;
  detail::GraphTransform differentiate = [spec, recompute = gradient.recompute_cheap_values](
                                             ir::Graph g) -> absl::StatusOr<ir::Graph> {
    const int forward_nodes = static_cast<int>(g.nodes.size());
    absl::StatusOr<ir::Graph> d = jit::Differentiate(g, spec);
    if (d.ok()) jit::RecomputeCheckpoints(*d, forward_nodes);
    if (d.ok() && recompute) jit::RecomputeCheapValues(*d, forward_nodes);
    return d;
  };
  return std::make_unique<Function>(
      std::make_unique<detail::FunctionImpl>(impl_, std::move(name), total, std::move(lambda),
                                             std::move(options), std::move(differentiate)));
}

RuntimeStats Runtime::stats() const { return impl_->stats(); }
std::vector<KernelTuning> Runtime::tuning_results() const { return impl_->tuning_results(); }
absl::Status Runtime::WaitForTuning() { return impl_->WaitForTuning(); }
void Runtime::StopTuning() { impl_->StopTuning(); }
absl::Status Runtime::WriteWorkload(const std::string& path) const {
  return impl_->WriteWorkload(path);
}
std::vector<KernelEvent> Runtime::kernel_events() const { return impl_->compiler().events(); }

Function::Function(std::unique_ptr<detail::FunctionImpl> impl) : impl_(std::move(impl)) {}
Function::~Function() = default;

// Every entry that may trace, compile or run is refused from inside pto's callbacks (the
// traced lambda, the log sink, the progress callback), which may run under this Function's
// locks: an error instead of a deadlock.
absl::Status Function::operator()(absl::Span<const TensorView> inputs,
                                  absl::Span<const TensorView> outputs) {
  if (absl::Status s = detail::RefuseFunctionCallInsideCallback(name()); !s.ok()) return s;
  return impl_->Call(inputs, outputs);
}

absl::StatusOr<std::vector<Tensor>> Function::operator()(absl::Span<const TensorView> inputs) {
  if (absl::Status s = detail::RefuseFunctionCallInsideCallback(name()); !s.ok()) return s;
  return impl_->CallAllocating(inputs);
}

absl::Status Function::Precompile(absl::Span<const std::vector<int64_t>> input_shapes) {
  if (absl::Status s = detail::RefuseFunctionCallInsideCallback(name()); !s.ok()) return s;
  return impl_->Precompile(input_shapes);
}

void Function::InvalidateConstants() { impl_->InvalidateConstants(); }

absl::StatusOr<std::vector<std::vector<int64_t>>> Function::OutputShapes(
    absl::Span<const std::vector<int64_t>> input_shapes) {
  if (absl::Status s = detail::RefuseFunctionCallInsideCallback(name()); !s.ok()) return s;
  return impl_->OutputShapes(input_shapes);
}

absl::StatusOr<std::string> Function::Dump(Stage stage,
                                           absl::Span<const std::vector<int64_t>> input_shapes) {
  if (absl::Status s = detail::RefuseFunctionCallInsideCallback(name()); !s.ok()) return s;
  constexpr std::string_view kLevels[] = {"tensor", "tile", "block", "exec", "llvm", "asm"};
  return impl_->Dump(kLevels[static_cast<int>(stage)], input_shapes);
}

absl::StatusOr<std::string> Function::Dump(std::string_view stage,
                                           absl::Span<const std::vector<int64_t>> input_shapes) {
  if (absl::Status s = detail::RefuseFunctionCallInsideCallback(name()); !s.ok()) return s;
  return impl_->Dump(stage, input_shapes);
}

absl::StatusOr<std::vector<KernelProfile>> Function::Profile(absl::Span<const TensorView> inputs,
                                                             absl::Span<const TensorView> outputs,
                                                             int calls) {
  if (absl::Status s = detail::RefuseFunctionCallInsideCallback(name()); !s.ok()) return s;
  return impl_->Profile(inputs, outputs, calls);
}

FunctionStats Function::stats() const { return impl_->stats(); }
const std::string& Function::name() const { return impl_->name(); }
int Function::num_inputs() const { return impl_->num_inputs(); }

}  // namespace pto
