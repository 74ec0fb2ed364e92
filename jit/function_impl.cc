#include "jit/function_impl.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <span>

#include "absl/strings/str_cat.h"
#include "device/machine_limits.h"
#include "jit/bound_call.h"
#include "jit/call_memo.h"
#include "jit/kernel_cost.h"
#include "jit/numerics/numerics_checker.h"
#include "jit/output_allocation.h"
#include "jit/output_overlap.h"
#include "jit/pipeline.h"
#include "jit/trace_observer.h"
#include "jit/tuning/tuning_data.h"
#include "jit/workload_entries.h"
#include "ops/shape_guards.h"

namespace pto::detail {
namespace {

// Each view's data pointer, into `data`.
void DataOf(absl::Span<const TensorView> views, void** data) {
  for (size_t i = 0; i < views.size(); ++i) data[i] = views[i].data;
}

// "[2, 8] [8, 4]": the shapes of a call's input views.
std::string ViewShapesText(absl::Span<const TensorView> views) {
  std::string s;
  for (const TensorView& v : views) absl::StrAppend(&s, s.empty() ? "" : " ", v.ShapeString());
  return s;
}

std::string ShapeString(const ir::Shape& shape, std::span<const int64_t> values) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    absl::StrAppend(&s, i ? ", " : "", shape[i].Evaluate(values));
  return s + "]";
}

// Each kernel's flops, bytes, rates and share of the roofline at `peaks`.
void AddRates(const device::MachinePeaks& peaks, const std::vector<jit::KernelCost>& costs,
              std::vector<KernelProfile>& profile) {
  for (size_t k = 0; k < profile.size(); ++k) {
    KernelProfile& p = profile[k];
    p.flops = costs[k].flops;
    p.bytes = costs[k].bytes;
    if (p.seconds <= 0) continue;
    p.gflops = p.flops / p.seconds * 1e-9;
    p.gbs = p.bytes / p.seconds * 1e-9;
    const double compute = peaks.gflops > 0 ? p.flops / (peaks.gflops * 1e9) : 0;
    const double memory = peaks.bandwidth_gbs > 0 ? p.bytes / (peaks.bandwidth_gbs * 1e9) : 0;
    p.memory_bound = memory > compute;
    p.roofline_share = std::max(compute, memory) / p.seconds;
  }
}

}  // namespace

FunctionImpl::FunctionImpl(std::shared_ptr<RuntimeImpl> runtime, std::string name, int num_inputs,
                           TraceFn fn, FunctionOptions options, GraphTransform transform)
    : runtime_(std::move(runtime)),
      name_(std::move(name)),
      id_(NewFunctionId()),
      num_inputs_(num_inputs),
      options_(std::move(options)),
      check_numerics_(options_.check_numerics || runtime_->options().check_numerics),
      constants_(num_inputs, options_.constant_inputs),
      checked_constants_(num_inputs),
      variants_(name_, num_inputs, std::move(fn), options_, std::move(transform)),
      tuning_(*runtime_, name_, mu_) {
  runtime_->AddFunction(this);
}

FunctionImpl::~FunctionImpl() { runtime_->RemoveFunction(this); }

absl::Status FunctionImpl::Call(absl::Span<const TensorView> inputs,
                                absl::Span<const TensorView> outputs) {
  jit::Timeline* timeline = runtime_->timeline();
  if (timeline == nullptr) return CallUntraced(inputs, outputs);
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = CallUntraced(inputs, outputs);
  timeline->Add(name_, jit::EventCategory::kCall, start, std::chrono::steady_clock::now(),
                {{"inputs", ViewShapesText(inputs)}, {"status", status.ToString()}});
  return status;
}

absl::Status FunctionImpl::CallBound(const BoundCallState& bound, const void* const* inputs,
                                     void* const* outputs) {
  jit::Timeline* timeline = runtime_->timeline();
  if (timeline == nullptr) return CallBoundUntraced(bound, inputs, outputs);
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = CallBoundUntraced(bound, inputs, outputs);
  timeline->Add(
      name_, jit::EventCategory::kCall, start, std::chrono::steady_clock::now(),
      {{"inputs", ViewShapesText(bound.inputs)}, {"bound", "yes"}, {"status", status.ToString()}});
  return status;
}

absl::Status FunctionImpl::CallUntraced(absl::Span<const TensorView> inputs,
                                        absl::Span<const TensorView> outputs) {
  calls_.fetch_add(1, std::memory_order_relaxed);
  const auto launch = [&](const CompiledClass& cls, const int64_t* values) {
    void* in[kMaxInputs];
    void* out[kMaxInputs];
    DataOf(inputs, in);
    DataOf(outputs, out);
    return LaunchCounted(cls, in, out, values);
  };
  if (const CallMemoEntry* memo = FindCallMemo(id_, inputs, outputs);
      memo != nullptr && PointersUsable(*memo, inputs, outputs, options_.in_place_outputs)) {
    if (absl::Status s = constants_.RefreshIfStale(inputs); !s.ok()) return s;
    int64_t values[CallMemoEntry::kMaxValues];
    std::copy_n(memo->values, memo->num_values, values);
    return launch(*memo->cls, values);
  }
  int64_t values[jit::kMaxSymbols];
  absl::StatusOr<const CompiledClass*> cls = CheckViews(inputs, outputs, values);
  if (!cls.ok()) return cls.status();
  RememberCall(id_, inputs, outputs, **cls, {values, static_cast<size_t>((*cls)->num_symbols)});
  return launch(**cls, values);
}

absl::StatusOr<const CompiledClass*> FunctionImpl::CheckViews(absl::Span<const TensorView> inputs,
                                                              absl::Span<const TensorView> outputs,
                                                              int64_t* values) {
  if (absl::Status s = CheckInputViews(name_, num_inputs_, inputs); !s.ok()) return s;
  const CallShapes shapes = ShapesOfViews(inputs);
  if (absl::Status s = constants_.RefreshIfStale(inputs); !s.ok()) return s;
  const CompiledClass* cls = table_.Find(shapes, values);
  if (cls == nullptr) {
    std::vector<uint64_t> queued;
    absl::StatusOr<const CompiledClass*> compiled = CompileFor(shapes, values, &queued);
    if (!compiled.ok()) return compiled.status();
    cls = *compiled;
    tuning_.Wait(queued);
  }
  if (absl::Status s = CheckCall(*cls, inputs, outputs, values); !s.ok()) return s;
  if (absl::Status s = CheckOutputsDisjoint(inputs, outputs, options_.in_place_outputs); !s.ok()) {
    return s;
  }
  return cls;
}

absl::Status FunctionImpl::LaunchCounted(const CompiledClass& cls, const void* const* inputs,
                                         void* const* outputs, const int64_t* values) {
  if (!runtime_->options().record_workload) return Launch(cls, inputs, outputs, values);
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = Launch(cls, inputs, outputs, values);
  CompiledClass& c = const_cast<CompiledClass&>(cls);  // the counters are the only mutable part
  c.calls.fetch_add(1, std::memory_order_relaxed);
  c.call_nanos.fetch_add(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count(),
      std::memory_order_relaxed);
  return status;
}

absl::Status FunctionImpl::CheckCall(const CompiledClass& cls, absl::Span<const TensorView> inputs,
                                     absl::Span<const TensorView> outputs,
                                     const int64_t* values) const {
  const std::span<const int64_t> vals(values, cls.variant->symbols.size());
  if (absl::Status s = ops::CheckShapeGuards(cls.variant->graph.guards, vals); !s.ok()) return s;
  if (outputs.size() != cls.output_shapes.size()) {
    return absl::InvalidArgumentError(absl::StrCat("function '", name_, "' produces ",
                                                   cls.output_shapes.size(), " outputs, got ",
                                                   outputs.size(), " output views"));
  }
  const std::vector<ir::DType>& input_dtypes = cls.variant->input_dtypes;
  for (int i = 0; i < num_inputs_ && i < static_cast<int>(input_dtypes.size()); ++i) {
    if (absl::Status s =
            CheckViewDType(inputs[i].dtype, static_cast<DType>(input_dtypes[i]), "input", i);
        !s.ok()) {
      return s;
    }
  }
  const ir::Graph& traced = cls.variant->graph;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const TensorView& t = outputs[o];
    if (absl::Status s = CheckTensorView(t, "output", static_cast<int>(o)); !s.ok()) return s;
    if (o < traced.outputs.size()) {
      const DType expected = static_cast<DType>(traced.nodes[traced.outputs[o]].dtype);
      if (absl::Status s = CheckViewDType(t.dtype, expected, "output", static_cast<int>(o));
          !s.ok()) {
        return s;
      }
    }
    const ir::Shape& shape = cls.output_shapes[o];
    bool same = static_cast<int>(shape.size()) == t.rank;
    for (int d = 0; same && d < t.rank; ++d) same = shape[d].Evaluate(vals) == t.shape[d];
    if (!same) {
      return absl::InvalidArgumentError(absl::StrCat("output ", o, ": shape ", t.ShapeString(),
                                                     " does not match the result shape ",
                                                     ShapeString(shape, vals)));
    }
  }
  if (outputs.size() > static_cast<size_t>(kMaxInputs)) {
    return absl::InvalidArgumentError("too many outputs");
  }
  return CheckInPlaceShapes(inputs, outputs, options_.in_place_outputs);
}

absl::Status FunctionImpl::Launch(const CompiledClass& cls, const void* const* inputs,
                                  void* const* outputs, const int64_t* values,
                                  KernelTimes* kernels) {
  const std::span<const int64_t> vals(values, cls.num_symbols);
  // Kernels only read their inputs.
  void* const* in = const_cast<void* const*>(inputs);
  void* with_constants[kMaxInputs];
  if (constants_.any()) {
    const std::vector<device::AlignedBuffer>& constant = constants_.current();
    for (int i = 0; i < num_inputs_; ++i) {
      with_constants[i] =
          constants_.is_constant(i) ? constant[i].data() : const_cast<void*>(inputs[i]);
    }
    in = with_constants;
  }
  void* const* out = outputs;
  const device::EpochGuard guard = runtime_->plan_epochs().Enter();
  const jit::Plan* plan = cls.plan.load(std::memory_order_acquire);
  double* seconds = nullptr;
  if (kernels != nullptr) {
    kernels->names.clear();
    for (const jit::PlanKernel& k : plan->kernels) kernels->names.push_back(k.name);
    kernels->seconds.assign(plan->kernels.size(), 0.0);
    seconds = kernels->seconds.data();
  }
  jit::Timeline* timeline = runtime_->timeline();
  if (timeline == nullptr && !check_numerics_) {
    return plan->Run(vals, in, out, runtime_->threads(), seconds, nullptr);
  }
  // While the Runtime traces, each piece of each kernel goes on its timeline.
  std::optional<jit::TraceObserver> trace;
  if (timeline != nullptr) trace.emplace(*plan, *timeline);
  // check_numerics: the run watched by a checker.
  std::optional<jit::numerics::NumericsChecker> checker;
  if (check_numerics_) {
    checker.emplace(*plan, cls.program.graph, std::span<void* const>(in, num_inputs_),
                    constants_.is_constant(), &checked_constants_);
  }
  jit::RunObserverPair both(trace.has_value() ? &*trace : nullptr,
                            checker.has_value() ? &*checker : nullptr);
  return plan->Run(vals, in, out, runtime_->threads(), seconds, both.single_or_self());
}

absl::StatusOr<const CompiledClass*> FunctionImpl::CompileFor(const CallShapes& shapes,
                                                              int64_t* values,
                                                              std::vector<uint64_t>* queued) {
  std::lock_guard<std::mutex> lock(mu_);
  if (const CompiledClass* c = table_.Find(shapes, values)) return c;  // compiled meanwhile
  absl::StatusOr<const TraceVariant*> variant = variants_.For(shapes);
  if (!variant.ok()) return variant.status();
  const TraceVariant& v = **variant;
  if (!BindSymbols(v, shapes, values)) {
    return absl::InternalError("input shapes do not bind the variant chosen for them");
  }
  // Past the cap, the variant's generic class: no installed class took the call, so this
  // variant has none yet (it would take every call the variant binds).
  const int64_t specific = table_.size() - table_.generic_size();
  const bool generic = specific >= options_.max_shape_classes;
  const std::span<const int64_t> vals(values, v.symbols.size());
  absl::StatusOr<CompiledClassResult> compiled =
      CompileClass(*runtime_, name_, v, shapes,
                   generic ? jit::GenericClass(v.symbols) : jit::Classify(vals, v.symbols),
                   constants_.is_constant(), options_.in_place_outputs, counters_);
  if (!compiled.ok()) return compiled.status();
  // The generic class is not tuned: it serves shapes of every bucket, and its candidates would
  // be checked at the ranges' largest sizes.
  if (generic) {
    runtime_->logger().Log(
        LogLevel::kWarning,
        absl::StrCat("pto: function '", name_, "' reached max_shape_classes (",
                     options_.max_shape_classes, "): calls no compiled class serves run its class ",
                     compiled->cls->label,
                     ", generic over the declared ranges (compiled once, not tuned); raise the "
                     "limit for code specialized to more shapes"));
  } else {
    tuning_.Queue(*compiled->cls, vals, compiled->tuning, queued);
  }
  return table_.Add(std::move(compiled->cls));
}

absl::StatusOr<std::vector<KernelProfile>> FunctionImpl::Profile(
    absl::Span<const TensorView> inputs, absl::Span<const TensorView> outputs, int calls) {
  if (calls < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Profile of '", name_, "': calls must be at least 1, got ", calls));
  }
  if (absl::Status s = Call(inputs, outputs); !s.ok()) return s;  // compiles, checks the views
  const CallShapes shapes = ShapesOfViews(inputs);
  int64_t values[jit::kMaxSymbols];
  const CompiledClass* cls = table_.Find(shapes, values);
  if (cls == nullptr) return absl::InternalError("the shape class just called is not installed");
  // A tuned plan swapped in between calls may have other kernels: profile one plan's runs only.
  calls_.fetch_add(calls, std::memory_order_relaxed);  // each profiled run is a call
  KernelTimes run;
  std::vector<std::string> first;
  std::vector<std::vector<double>> times;
  void* in[kMaxInputs];
  void* out[kMaxInputs];
  DataOf(inputs, in);
  DataOf(outputs, out);
  for (int c = 0; c < calls; ++c) {
    if (absl::Status s = Launch(*cls, in, out, values, &run); !s.ok()) {
      return s;
    }
    if (c == 0) {
      first = run.names;
      times.resize(first.size());
    }
    if (run.names != first) continue;
    for (size_t k = 0; k < first.size(); ++k) times[k].push_back(run.seconds[k]);
  }
  std::vector<KernelProfile> profile;
  double total = 0;
  for (size_t k = 0; k < first.size(); ++k) {
    std::vector<double>& t = times[k];
    std::sort(t.begin(), t.end());
    KernelProfile p;
    p.kernel = first[k];
    p.seconds = t[t.size() / 2];
    profile.push_back(std::move(p));
    total += profile.back().seconds;
  }
  for (KernelProfile& p : profile) p.share = total > 0 ? p.seconds / total : 0;
  std::vector<jit::KernelCost> costs;
  {
    std::lock_guard<std::mutex> lock(mu_);  // guards the class's program
    const std::vector<int64_t> symbols = jit::ProgramSymbolValues(
        cls->program, std::span<const int64_t>(values, cls->variant->symbols.size()));
    for (const ir::KernelCall& call : cls->program.tiles.calls)
      costs.push_back(jit::CostOf(call.kernel, symbols));
  }
  if (costs.size() == profile.size()) AddRates(Peaks(), costs, profile);
  return profile;
}

device::MachinePeaks FunctionImpl::Peaks() const {
  const RuntimeOptions& o = runtime_->options();
  device::MachinePeaks peaks{o.peak_gflops, o.peak_bandwidth_gbs};
  if (peaks.gflops > 0 && peaks.bandwidth_gbs > 0) return peaks;
  const device::MachinePeaks measured =
      device::MeasuredPeaks(runtime_->device(), runtime_->intra_op_threads());
  if (peaks.gflops <= 0) peaks.gflops = measured.gflops;
  if (peaks.bandwidth_gbs <= 0) peaks.bandwidth_gbs = measured.bandwidth_gbs;
  return peaks;
}

absl::StatusOr<const TraceVariant*> FunctionImpl::TracedVariant(
    absl::Span<const std::vector<int64_t>> input_shapes, int64_t* values,
    absl::Span<const TensorView> views) {
  absl::StatusOr<CallShapes> shapes = ShapesOfVectors(name_, num_inputs_, input_shapes);
  if (!shapes.ok()) return shapes.status();
  if (views.size() == static_cast<size_t>(num_inputs_)) {
    for (int i = 0; i < num_inputs_; ++i) shapes->dtype[i] = views[i].dtype;
    shapes->has_dtypes = true;
  } else {
    DeclaredDTypes(*shapes);
  }
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<const TraceVariant*> variant = variants_.For(*shapes);
  if (!variant.ok()) return variant.status();
  if (!BindSymbols(**variant, *shapes, values)) {
    return absl::InternalError("input shapes do not bind the variant traced for them");
  }
  return variant;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> FunctionImpl::OutputShapes(
    absl::Span<const std::vector<int64_t>> input_shapes) {
  int64_t values[jit::kMaxSymbols];
  absl::StatusOr<const TraceVariant*> variant = TracedVariant(input_shapes, values);
  if (!variant.ok()) return variant.status();
  std::span<const int64_t> vals(values, (*variant)->symbols.size());
  if (absl::Status s = ops::CheckShapeGuards((*variant)->graph.guards, vals); !s.ok()) return s;
  return EvaluateOutputShapes((*variant)->graph, vals);
}

absl::StatusOr<std::vector<Tensor>> FunctionImpl::CallAllocating(
    absl::Span<const TensorView> inputs) {
  if (absl::Status s = CheckInputViews(name_, num_inputs_, inputs); !s.ok()) return s;
  std::vector<std::vector<int64_t>> in_shapes;
  for (const TensorView& t : inputs) in_shapes.emplace_back(t.dims().begin(), t.dims().end());
  int64_t values[jit::kMaxSymbols];
  absl::StatusOr<const TraceVariant*> variant = TracedVariant(in_shapes, values, inputs);
  if (!variant.ok()) return variant.status();
  const TraceVariant& v = **variant;
  const std::span<const int64_t> vals(values, v.symbols.size());
  if (absl::Status s = ops::CheckShapeGuards(v.graph.guards, vals); !s.ok()) return s;
  absl::StatusOr<std::vector<std::vector<int64_t>>> out_shapes =
      EvaluateOutputShapes(v.graph, vals);
  if (!out_shapes.ok()) return out_shapes.status();
  // Outputs declared in place are written over their input's memory and returned as Tensors
  // borrowing it.
  std::vector<const TensorView*> in_place(out_shapes->size(), nullptr);
  std::vector<InPlaceOutput> pairs;
  for (const InPlaceOutput& p : options_.in_place_outputs) {
    if (p.output >= static_cast<int>(in_place.size())) continue;  // the compile reports it
    in_place[p.output] = &inputs[p.input];
    pairs.push_back(p);
  }
  std::vector<DType> out_dtypes;
  for (int o : v.graph.outputs) out_dtypes.push_back(static_cast<DType>(v.graph.nodes[o].dtype));
  std::vector<TensorView> shaped;
  for (size_t o = 0; o < out_shapes->size(); ++o) {
    shaped.push_back(TensorView::Dense(static_cast<const float*>(nullptr), (*out_shapes)[o]));
    shaped.back().dtype = out_dtypes[o];
  }
  if (absl::Status s = CheckInPlaceShapes(inputs, shaped, pairs); !s.ok()) return s;
  absl::StatusOr<std::vector<Tensor>> outs = AllocateOutputs(*out_shapes, out_dtypes, in_place);
  if (!outs.ok()) return outs.status();
  std::vector<TensorView> views;
  for (const Tensor& t : *outs) views.push_back(t.view());
  if (absl::Status s = Call(inputs, views); !s.ok()) return s;
  return outs;
}

void FunctionImpl::DeclaredDTypes(CallShapes& shapes) const {
  if (options_.input_dtypes.size() != static_cast<size_t>(num_inputs_)) return;
  for (int i = 0; i < num_inputs_; ++i) shapes.dtype[i] = options_.input_dtypes[i];
  shapes.has_dtypes = true;
}

absl::Status FunctionImpl::Precompile(absl::Span<const std::vector<int64_t>> input_shapes) {
  absl::StatusOr<CallShapes> shapes = ShapesOfVectors(name_, num_inputs_, input_shapes);
  if (!shapes.ok()) return shapes.status();
  DeclaredDTypes(*shapes);
  int64_t values[jit::kMaxSymbols];
  if (table_.Find(*shapes, values) != nullptr) return absl::OkStatus();
  std::vector<uint64_t> queued;
  absl::StatusOr<const CompiledClass*> compiled = CompileFor(*shapes, values, &queued);
  if (!compiled.ok()) return compiled.status();
  tuning_.Wait(queued);
  return absl::OkStatus();
}

absl::StatusOr<std::string> FunctionImpl::Dump(
    std::string_view stage, absl::Span<const std::vector<int64_t>> input_shapes) {
  int64_t values[jit::kMaxSymbols];
  absl::StatusOr<const TraceVariant*> variant = TracedVariant(input_shapes, values);
  if (!variant.ok()) return variant.status();
  const TraceVariant& v = **variant;
  const jit::ShapeClass cls =
      jit::Classify(std::span<const int64_t>(values, v.symbols.size()), v.symbols);
  const int threads = runtime_->threads() ? runtime_->threads()->threads() : 1;
  return jit::PrintAfter(
      stage, v.graph, cls,
      PipelineOptionsOf(*runtime_, constants_.is_constant(), options_.in_place_outputs),
      TuningRecordsOf(*runtime_, name_, ShapeClassKey(v, cls)), runtime_->compiler(), threads);
}

std::vector<proto::WorkloadEntry> FunctionImpl::Workload() const {
  std::lock_guard<std::mutex> lock(mu_);
  return WorkloadEntries(name_, variants_.all(), table_.classes(), options_.constant_inputs);
}

FunctionStats FunctionImpl::stats() const {
  FunctionStats s;
  s.calls = calls_.load();
  s.traces = variants_.traces();
  s.compiles = counters_.compiles.load();
  s.kernels_compiled = counters_.kernels_compiled.load();
  s.kernels_loaded = counters_.kernels_loaded.load();
  s.shape_classes = table_.size();
  s.generic_classes = table_.generic_size();
  s.compile_seconds = counters_.nanos.load() * 1e-9;
  s.plans_swapped = tuning_.plans_swapped();
  s.kernels_tuned_cached = counters_.kernels_tuned_cached.load();
  s.tuning_records_applied = counters_.tuning_records_applied.load();
  return s;
}

}  // namespace pto::detail
