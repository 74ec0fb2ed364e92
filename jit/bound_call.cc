// Function::Bind and BoundCall: a call's shape checks once, then calls on data pointers.
#include "jit/bound_call.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "device/yield_point.h"
#include "jit/callback_guard.h"
#include "jit/function_impl.h"
#include "jit/output_overlap.h"

namespace pto {

BoundCall::BoundCall() = default;
BoundCall::~BoundCall() = default;
BoundCall::BoundCall(const BoundCall&) = default;
BoundCall& BoundCall::operator=(const BoundCall&) = default;
BoundCall::BoundCall(std::shared_ptr<const detail::BoundCallState> state)
    : state_(std::move(state)) {}

absl::Status BoundCall::operator()(absl::Span<const void* const> inputs,
                                   absl::Span<void* const> outputs) const {
  if (state_ == nullptr) {
    return absl::FailedPreconditionError(
        "call of an unbound BoundCall: get one from Function::Bind");
  }
  if (state_->alive.expired()) {
    return absl::FailedPreconditionError(
        absl::StrCat("call of a BoundCall of function '", state_->name, "', which was destroyed"));
  }
  const detail::BoundCallState& state = *state_;
  detail::FunctionImpl& f = *state.function;
  if (absl::Status s = detail::RefuseFunctionCallInsideCallback(f.name()); !s.ok()) return s;
  if (inputs.size() != state.inputs.size() || outputs.size() != state.outputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bound call of function '", state.name, "' takes ", state.inputs.size(), " inputs and ",
        state.outputs.size(), " outputs, got ", inputs.size(), " and ", outputs.size()));
  }
  return f.CallBound(state, inputs.data(), outputs.data());
}

absl::StatusOr<BoundCall> Function::Bind(absl::Span<const TensorView> inputs,
                                         absl::Span<const TensorView> outputs) {
  if (absl::Status s = detail::RefuseFunctionCallInsideCallback(name()); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<const detail::BoundCallState>> state =
      impl_->Bind(inputs, outputs);
  if (!state.ok()) return state.status();
  return BoundCall(*std::move(state));
}

namespace detail {

absl::StatusOr<std::shared_ptr<const BoundCallState>> FunctionImpl::Bind(
    absl::Span<const TensorView> inputs, absl::Span<const TensorView> outputs) {
  auto state = std::make_shared<BoundCallState>();
  int64_t values[jit::kMaxSymbols];
  absl::StatusOr<const CompiledClass*> cls = CheckViews(inputs, outputs, values);
  if (!cls.ok()) return cls.status();
  state->function = this;
  state->launchable = !constants_.any() && !check_numerics_ && !runtime_->options().record_workload;
  state->epochs = &runtime_->plan_epochs();
  state->alive = alive_;
  state->name = name_;
  state->cls = *cls;
  state->values.assign(values, values + (*cls)->num_symbols);
  state->inputs.assign(inputs.begin(), inputs.end());
  state->outputs.assign(outputs.begin(), outputs.end());
  for (const std::vector<TensorView>* views : {&state->inputs, &state->outputs}) {
    for (const TensorView& v : *views) {
      // The views passed the call's checks: their element counts fit.
      state->bytes.push_back(static_cast<uint64_t>(v.num_elements()) * DTypeSize(v.dtype));
    }
  }
  if (state->launchable) RefreshBoundLaunch(*state);
  return state;
}

void FunctionImpl::RefreshBoundLaunch(const BoundCallState& bound) {
  std::lock_guard<std::mutex> lock(bound.launches_mu);
  const device::EpochGuard guard = runtime_->plan_epochs().Enter();
  // The generation first: a plan swapped in after it gets the next one, so a copy of a newer
  // plan under an older generation is replaced at the next call, never the other way round.
  const uint64_t generation = bound.cls->generation.load(std::memory_order_acquire);
  const BoundLaunch* current = bound.launch.load(std::memory_order_relaxed);
  if (current != nullptr && current->generation == generation) return;  // another call did
  const jit::Plan& plan = *bound.cls->plan.load(std::memory_order_acquire);
  auto launch = std::make_unique<BoundLaunch>();
  launch->generation = generation;
  const jit::Plan::SingleLaunch& s = plan.single;
  bool serial = plan.SingleRunsSerially(runtime_->threads());
  for (int j = 0; serial && j < s.num_buffers; ++j) {
    const jit::BufferRef& b = s.buffers[j];
    if (b.kind == ir::BufferKind::kInput) {
      launch->source[j] = b.index;
    } else if (b.kind == ir::BufferKind::kOutput) {
      launch->source[j] = -1 - b.index;
    } else {
      serial = false;  // a packed constant: the general launch finds its copy
    }
  }
  if (serial) {
    launch->fn = s.fn;
    launch->num_buffers = s.num_buffers;
    std::copy_n(s.extent, 2, launch->extent);
    launch->scratch_bytes = s.scratch_bytes;
    std::copy_n(s.symbols, BoundLaunch::kMaxSymbols, launch->symbols);
  }
  bound.launch.store(launch.get(), std::memory_order_release);
  bound.launches.push_back(std::move(launch));
}

absl::Status FunctionImpl::CallBoundUntraced(const BoundCallState& bound, const void* const* inputs,
                                             void* const* outputs) {
  calls_.fetch_add(1, std::memory_order_relaxed);
  const bool usable =
      DataPointersUsable(bound.bytes, {inputs, bound.inputs.size()},
                         {outputs, bound.outputs.size()}, options_.in_place_outputs);
  if (usable && bound.launchable && runtime_->timeline() == nullptr && !device::HasYieldHook()) {
    const device::EpochGuard guard = bound.epochs->Enter();
    const uint64_t generation = bound.cls->generation.load(std::memory_order_acquire);
    const BoundLaunch* launch = bound.launch.load(std::memory_order_acquire);
    if (launch != nullptr && launch->generation == generation) {
      if (launch->fn == nullptr) return Launch(*bound.cls, inputs, outputs, bound.values.data());
      void* buffers[BoundLaunch::kMaxBuffers];
      for (int j = 0; j < launch->num_buffers; ++j) {
        const int source = launch->source[j];
        buffers[j] = source >= 0 ? const_cast<void*>(inputs[source]) : outputs[-1 - source];
      }
      jit::RunKernelSerially(launch->fn, buffers, launch->symbols, launch->extent,
                             launch->scratch_bytes);
      return absl::OkStatus();
    }
    absl::Status status = Launch(*bound.cls, inputs, outputs, bound.values.data());
    RefreshBoundLaunch(bound);
    return status;
  }
  if (!usable || constants_.stale()) {
    // The bound views over these pointers through a call's checks: they name what a pointer
    // check refused, as a call with views would, and copy a stale constant input.
    std::vector<TensorView> in = bound.inputs, out = bound.outputs;
    for (size_t i = 0; i < in.size(); ++i) in[i].data = const_cast<void*>(inputs[i]);
    for (size_t o = 0; o < out.size(); ++o) out[o].data = outputs[o];
    int64_t values[jit::kMaxSymbols];
    if (absl::StatusOr<const CompiledClass*> cls = CheckViews(in, out, values); !cls.ok()) {
      return cls.status();
    }
  }
  return LaunchCounted(*bound.cls, inputs, outputs, bound.values.data());
}

}  // namespace detail
}  // namespace pto
