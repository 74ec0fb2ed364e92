// The public Runtime and Function: thin forwarding to their Impl classes.
#include "pto/runtime.h"

#include "absl/strings/str_cat.h"
#include "jit/function_impl.h"
#include "jit/runtime_impl.h"

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
  if (threads > 1) threads_ = std::make_unique<device::ThreadArena>(threads);
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
  if (options.intra_op_threads < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "intra_op_threads must be >= 0 (0 = all cores), got ", options.intra_op_threads));
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
  absl::StatusOr<std::unique_ptr<jit::KernelCompiler>> compiler =
      jit::KernelCompiler::Create(device, store->get());
  if (!compiler.ok()) return compiler.status();
  auto impl = std::make_unique<detail::RuntimeImpl>(std::move(options), std::move(device),
                                                    *std::move(store), *std::move(compiler));
  return std::unique_ptr<Runtime>(new Runtime(std::move(impl)));
}

Runtime::Runtime(std::unique_ptr<detail::RuntimeImpl> impl) : impl_(std::move(impl)) {}
Runtime::~Runtime() = default;

absl::StatusOr<std::unique_ptr<Function>> Runtime::JitTraced(std::string name, int num_inputs,
                                                             TraceFn trace,
                                                             FunctionOptions options) {
  if (absl::Status s = detail::FunctionImpl::ValidateOptions(num_inputs, options); !s.ok())
    return s;
  return std::make_unique<Function>(std::make_unique<detail::FunctionImpl>(
      impl_.get(), std::move(name), num_inputs, std::move(trace), std::move(options)));
}

RuntimeStats Runtime::stats() const { return impl_->stats(); }
std::vector<KernelEvent> Runtime::kernel_events() const { return impl_->compiler().events(); }

Function::Function(std::unique_ptr<detail::FunctionImpl> impl) : impl_(std::move(impl)) {}
Function::~Function() = default;

absl::Status Function::operator()(absl::Span<const TensorView> inputs,
                                  absl::Span<const TensorView> outputs) {
  return impl_->Call(inputs, outputs);
}

absl::StatusOr<std::vector<Tensor>> Function::operator()(absl::Span<const TensorView> inputs) {
  return impl_->CallAllocating(inputs);
}

absl::Status Function::Precompile(absl::Span<const std::vector<int64_t>> input_shapes) {
  return impl_->Precompile(input_shapes);
}

void Function::InvalidateConstants() { impl_->InvalidateConstants(); }

absl::StatusOr<std::vector<std::vector<int64_t>>> Function::OutputShapes(
    absl::Span<const std::vector<int64_t>> input_shapes) {
  return impl_->OutputShapes(input_shapes);
}

absl::StatusOr<std::string> Function::Dump(Stage stage,
                                           absl::Span<const std::vector<int64_t>> input_shapes) {
  return impl_->Dump(stage, input_shapes);
}

FunctionStats Function::stats() const { return impl_->stats(); }
const std::string& Function::name() const { return impl_->name(); }
int Function::num_inputs() const { return impl_->num_inputs(); }

}  // namespace pto
