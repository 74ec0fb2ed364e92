#include "jit/function_impl.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/callback_guard.h"
#include "jit/graph/graph_def.h"
#include "jit/graph/graph_hash.h"
#include "jit/output_allocation.h"
#include "jit/output_overlap.h"
#include "jit/trace.h"
#include "jit/tuning/kernel_space.h"
#include "jit/tuning/kernel_tuning_job.h"
#include "jit/tuning/tuning_record.h"
#include "ops/derived_symbols.h"
#include "ops/shape_guards.h"
#include "proto/cache.pb.h"

namespace pto::detail {
namespace {

std::string DimsString(const int64_t* dims, int rank) {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) absl::StrAppend(&s, i ? ", " : "", dims[i]);
  return s + "]";
}

std::string ShapeString(const ir::Shape& shape, std::span<const int64_t> values) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    absl::StrAppend(&s, i ? ", " : "", shape[i].Evaluate(values));
  return s + "]";
}

absl::Status CheckView(const TensorView& t, const char* what, int index) {
  if (t.rank < 0 || t.rank > kMaxRank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", index, ": rank ", t.rank, " is outside [0, ", kMaxRank, "]"));
  }
  if (t.dtype != DType::kF32) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", index, ": dtype ", DTypeName(t.dtype),
                                                   " is not supported (expected f32)"));
  }
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " ", index, ": dim ", d, " is negative (", t.shape[d], ")"));
    }
  }
  const int64_t n = t.num_elements();
  if (n < 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", index, ": shape ", t.ShapeString(),
                                                   " has more elements than int64 can count"));
  }
  if (n > (int64_t{1} << 62) / 4) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", index, ": shape ", t.ShapeString(),
                                                   " is too large to address in bytes"));
  }
  if (t.data == nullptr && n > 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", index, ": data pointer is null"));
  }
  if (reinterpret_cast<uintptr_t>(t.data) % alignof(float) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", index, ": data pointer is not aligned to 4 bytes"));
  }
  int64_t expected = 1;
  for (int d = t.rank - 1; d >= 0 && n > 0; --d) {  // an empty tensor's strides are never used
    if (t.shape[d] != 1 && t.strides[d] != expected) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " ", index, ": strides ", DimsString(t.strides, t.rank), " for shape ",
          t.ShapeString(), " are not dense row-major (pto supports dense row-major tensors only)"));
    }
    expected *= t.shape[d];
  }
  return absl::OkStatus();
}

}  // namespace

FunctionImpl::FunctionImpl(std::shared_ptr<RuntimeImpl> runtime, std::string name, int num_inputs,
                           TraceFn fn, FunctionOptions options)
    : runtime_(std::move(runtime)),
      name_(std::move(name)),
      num_inputs_(num_inputs),
      fn_(std::move(fn)),
      options_(std::move(options)),
      is_constant_(num_inputs, false),
      lanes_(runtime_->device().f32_lanes()) {
  for (int c : options_.constant_inputs) is_constant_[c] = true;
  runtime_->AddFunction(this);
}

FunctionImpl::~FunctionImpl() {
  runtime_->RemoveFunction(this);
  // Tuning jobs call back into this Function: they end before it goes.
  tuner::TuningService* service = runtime_->tuning_service();
  if (service == nullptr) return;
  std::vector<uint64_t> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs = tuning_jobs_;
  }
  for (uint64_t id : jobs) service->Cancel(id);
  for (uint64_t id : jobs) service->Wait(id, std::numeric_limits<double>::infinity());
}

absl::Status FunctionImpl::ValidateOptions(int num_inputs, const FunctionOptions& options) {
  if (num_inputs > kMaxInputs) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most ", kMaxInputs, " inputs are supported"));
  }
  std::map<std::string, std::pair<int64_t, int64_t>> ranges;
  for (const DynamicDim& d : options.dynamic) {
    if (d.input < 0 || d.input >= num_inputs) {
      return absl::InvalidArgumentError(absl::StrCat("dynamic dim '", d.dim.name(), "': input ",
                                                     d.input, " does not exist (", num_inputs,
                                                     " inputs)"));
    }
    if (d.axis < 0 || d.axis >= kMaxRank) {
      return absl::InvalidArgumentError(
          absl::StrCat("dynamic dim '", d.dim.name(), "': axis ", d.axis, " is out of range"));
    }
    if (d.dim.min() < 0 || d.dim.min() > d.dim.max()) {
      return absl::InvalidArgumentError(absl::StrCat("dynamic dim '", d.dim.name(), "': range [",
                                                     d.dim.min(), ", ", d.dim.max(),
                                                     "] is empty or negative"));
    }
    auto [it, inserted] = ranges.emplace(d.dim.name(), std::pair{d.dim.min(), d.dim.max()});
    if (!inserted && it->second != std::pair{d.dim.min(), d.dim.max()}) {
      return absl::InvalidArgumentError(
          absl::StrCat("dynamic dim '", d.dim.name(), "' is declared with two different ranges"));
    }
    for (int c : options.constant_inputs) {
      if (c == d.input) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", c, " is constant and cannot have dynamic dims"));
      }
    }
  }
  for (int c : options.constant_inputs) {
    if (c < 0 || c >= num_inputs) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant input ", c, " does not exist (", num_inputs, " inputs)"));
    }
  }
  if (options.max_shape_classes < 1) {
    return absl::InvalidArgumentError("max_shape_classes must be at least 1");
  }
  return absl::OkStatus();
}

FunctionImpl::Shapes FunctionImpl::ShapesOfViews(absl::Span<const TensorView> inputs) const {
  Shapes shapes;
  for (int i = 0; i < num_inputs_; ++i) {
    shapes.rank[i] = inputs[i].rank;
    shapes.dims[i] = inputs[i].shape;
  }
  return shapes;
}

absl::StatusOr<FunctionImpl::Shapes> FunctionImpl::ShapesOf(
    absl::Span<const std::vector<int64_t>> input_shapes) const {
  if (static_cast<int>(input_shapes.size()) != num_inputs_) {
    return absl::InvalidArgumentError(absl::StrCat("function '", name_, "' takes ", num_inputs_,
                                                   " inputs, got ", input_shapes.size(),
                                                   " shapes"));
  }
  Shapes shapes;
  for (int i = 0; i < num_inputs_; ++i) {
    if (input_shapes[i].size() > static_cast<size_t>(kMaxRank)) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, ": rank ", input_shapes[i].size(),
                                                     " is outside [0, ", kMaxRank, "]"));
    }
    for (size_t d = 0; d < input_shapes[i].size(); ++d) {
      if (input_shapes[i][d] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", i, ": dim ", d, " is negative (", input_shapes[i][d], ")"));
      }
    }
    if (const TensorView view = TensorView::Dense(nullptr, input_shapes[i]);
        view.num_elements() < 0) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, ": shape ", view.ShapeString(),
                                                     " has more elements than int64 can count"));
    }
    shapes.rank[i] = static_cast<int>(input_shapes[i].size());
    shapes.dims[i] = input_shapes[i].data();
  }
  return shapes;
}

absl::Status FunctionImpl::ValidateInputs(absl::Span<const TensorView> inputs) const {
  if (static_cast<int>(inputs.size()) != num_inputs_) {
    return absl::InvalidArgumentError(
        absl::StrCat("function '", name_, "' takes ", num_inputs_, " inputs, got ", inputs.size()));
  }
  for (int i = 0; i < num_inputs_; ++i) {
    if (absl::Status s = CheckView(inputs[i], "input", i); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool FunctionImpl::BindSymbols(const Variant& v, const Shapes& shapes, int64_t* values) const {
  const size_t n = v.symbols.size();
  bool bound[jit::kMaxSymbols] = {};
  for (int i = 0; i < num_inputs_; ++i) {
    const std::vector<DimSpec>& spec = v.inputs[i];
    if (static_cast<int>(spec.size()) != shapes.rank[i]) return false;
    for (size_t d = 0; d < spec.size(); ++d) {
      const int64_t x = shapes.dims[i][d];
      if (spec[d].symbol < 0) {
        if (spec[d].value != x) return false;
      } else if (bound[spec[d].symbol]) {
        if (values[spec[d].symbol] != x) return false;
      } else {
        bound[spec[d].symbol] = true;
        values[spec[d].symbol] = x;
      }
    }
  }
  ops::BindDerivedSymbols(v.symbols, std::span<int64_t>(values, n));
  for (size_t s = 0; s < n; ++s) {
    if (values[s] < v.symbols[s].min || values[s] > v.symbols[s].max) return false;
  }
  return true;
}

const FunctionImpl::Entry* FunctionImpl::Lookup(const Shapes& shapes, int64_t* values) const {
  const Table* table = table_.load(std::memory_order_acquire);
  if (table == nullptr) return nullptr;
  for (const Entry* e : table->entries) {
    if (!BindSymbols(*e->variant, shapes, values)) continue;
    if (jit::Matches(e->cls, std::span<const int64_t>(values, e->variant->symbols.size()),
                     e->variant->symbols, lanes_)) {
      return e;
    }
  }
  return nullptr;
}

absl::Status FunctionImpl::CheckSymbolValues(const Variant& v, const Shapes& shapes) const {
  std::vector<int64_t> value(v.symbols.size(), -1);
  std::vector<std::pair<int, int>> where(v.symbols.size());
  for (int i = 0; i < num_inputs_; ++i) {
    const std::vector<DimSpec>& spec = v.inputs[i];
    if (static_cast<int>(spec.size()) != shapes.rank[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input ", i, ": rank ", shapes.rank[i], " does not match the traced rank ", spec.size()));
    }
    for (size_t d = 0; d < spec.size(); ++d) {
      const int s = spec[d].symbol;
      const int64_t x = shapes.dims[i][d];
      if (s < 0) continue;
      const ir::SymbolInfo& info = v.symbols[s];
      if (v.declared[s] && (x < info.min || x > info.max)) {
        return absl::InvalidArgumentError(absl::StrCat("input ", i, " dim ", d, " (", info.name,
                                                       ") is ", x, ", outside the declared range [",
                                                       info.min, ", ", info.max, "]"));
      }
      if (!v.declared[s] && x > info.max) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", i, " dim ", d, " is ", x, ", above ", info.max,
                         ", the largest size pto supports for a dim that changes between calls"));
      }
      if (value[s] >= 0 && value[s] != x) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", i, " dim ", d, " (", info.name, ") is ", x, " but input ", where[s].first,
            " dim ", where[s].second, " gives ", info.name, " = ", value[s]));
      }
      value[s] = x;
      where[s] = {i, static_cast<int>(d)};
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<const FunctionImpl::Variant*> FunctionImpl::VariantFor(const Shapes& shapes) {
  for (int i = 0; i < num_inputs_; ++i) {
    if (shapes.rank[i] > kMaxRank) return absl::InvalidArgumentError("rank too large");
  }
  // An existing variant whose static dims match.
  for (const auto& v : variants_) {
    absl::Status s = CheckSymbolValues(*v, shapes);
    if (!s.ok()) {
      if (s.message().find("declared range") != std::string_view::npos ||
          s.message().find("rank") != std::string_view::npos) {
        return s;
      }
      continue;
    }
    bool statics_match = true;
    for (int i = 0; i < num_inputs_ && statics_match; ++i) {
      for (int d = 0; d < shapes.rank[i]; ++d) {
        const DimSpec& spec = v->inputs[i][d];
        if (spec.symbol < 0 && spec.value != shapes.dims[i][d]) statics_match = false;
      }
    }
    if (statics_match) return v.get();
  }
  auto v = std::make_unique<Variant>();
  if (variants_.empty()) {
    std::map<std::string, int> by_name;
    for (int i = 0; i < num_inputs_; ++i) {
      v->inputs.emplace_back(shapes.rank[i]);
      for (int d = 0; d < shapes.rank[i]; ++d) v->inputs[i][d].value = shapes.dims[i][d];
    }
    for (const DynamicDim& dd : options_.dynamic) {
      if (dd.axis >= shapes.rank[dd.input]) {
        return absl::InvalidArgumentError(
            absl::StrCat("dynamic dim '", dd.dim.name(), "': input ", dd.input, " has rank ",
                         shapes.rank[dd.input], ", no axis ", dd.axis));
      }
      auto [it, inserted] = by_name.emplace(dd.dim.name(), static_cast<int>(v->symbols.size()));
      if (inserted) {
        v->symbols.push_back(ir::SymbolInfo{dd.dim.name(), dd.dim.min(), dd.dim.max()});
        v->declared.push_back(true);
      }
      v->inputs[dd.input][dd.axis].symbol = it->second;
    }
    if (absl::Status s = CheckSymbolValues(*v, shapes); !s.ok()) return s;
  } else {
    // Automatic dynamic shapes: dims whose value changed become symbolic. Dims that changed
    // from the same value to the same value share one symbol (x and its residual's batch).
    const Variant& last = *variants_.back();
    *v = Variant{last.inputs, last.symbols, last.declared, {}};
    while (!v->symbols.empty() && v->symbols.back().derived.has_value()) {  // the trace adds them
      v->symbols.pop_back();
      v->declared.pop_back();
    }
    std::map<std::pair<int64_t, int64_t>, int> groups;
    for (int i = 0; i < num_inputs_; ++i) {
      if (static_cast<int>(last.inputs[i].size()) != shapes.rank[i]) {
        return absl::InvalidArgumentError(absl::StrCat("input ", i, ": rank ", shapes.rank[i],
                                                       " does not match the traced rank ",
                                                       last.inputs[i].size()));
      }
      for (int d = 0; d < shapes.rank[i]; ++d) {
        DimSpec& spec = v->inputs[i][d];
        const int64_t x = shapes.dims[i][d];
        if (spec.symbol >= 0 || spec.value == x) continue;
        if (is_constant_[i] || !options_.automatic_dynamic) {
          return absl::InvalidArgumentError(absl::StrCat(
              "input ", i, " dim ", d, " is ", x, " but the function was traced with ", spec.value,
              is_constant_[i] ? " (a constant input's shape is fixed)"
                              : " (declare the dim dynamic or enable automatic_dynamic)"));
        }
        auto [it, inserted] =
            groups.emplace(std::pair{spec.value, x}, static_cast<int>(v->symbols.size()));
        if (inserted) {
          v->symbols.push_back(
              ir::SymbolInfo{absl::StrCat("d", auto_symbols_++), 0, int64_t{1} << 40});
          v->declared.push_back(false);
        }
        spec.symbol = it->second;
      }
    }
    if (absl::Status s = CheckSymbolValues(*v, shapes); !s.ok()) return s;
  }
  if (v->symbols.size() > static_cast<size_t>(jit::kMaxSymbols / 2)) {
    return absl::InvalidArgumentError("too many symbolic dims");
  }
  // Trace.
  std::vector<jit::TraceInput> trace_inputs(num_inputs_);
  for (int i = 0; i < num_inputs_; ++i) {
    for (const DimSpec& spec : v->inputs[i]) {
      trace_inputs[i].shape.push_back(spec.symbol >= 0 ? ir::SymExpr::Symbol(spec.symbol)
                                                       : ir::SymExpr(spec.value));
    }
  }
  traces_.fetch_add(1);
  absl::StatusOr<ir::Graph> graph;
  {
    const CallbackScope lambda_runs(CallbackKind::kTracedLambda, name_);
    graph = jit::Trace(fn_, trace_inputs, v->symbols);
  }
  if (!graph.ok()) return graph.status();
  v->graph = *std::move(graph);
  // The trace appends the symbols its slices derive (after the inputs' symbols).
  v->symbols = v->graph.symbols;
  v->declared.resize(v->symbols.size(), false);
  if (v->symbols.size() > static_cast<size_t>(jit::kMaxSymbols / 2)) {
    return absl::InvalidArgumentError(
        absl::StrCat("too many symbolic dims: the program uses ", v->symbols.size(),
                     " symbols (counting those derived by slices of symbolic dims); at most ",
                     jit::kMaxSymbols / 2, " are supported"));
  }
  v->graph_hash = graph::CanonicalGraphHash(v->graph).Hex();
  variants_.push_back(std::move(v));
  return variants_.back().get();
}

std::string FunctionImpl::CanonicalShapeClass(const Variant& v, const jit::ShapeClass& cls) {
  std::vector<bool> named(v.symbols.size(), false);
  std::string out;
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    for (size_t d = 0; d < v.inputs[i].size(); ++d) {
      const int s = v.inputs[i][d].symbol;
      if (s < 0 || named[s]) continue;
      named[s] = true;
      const jit::SymbolClass& c = cls.symbols[s];
      absl::StrAppend(&out, out.empty() ? "" : ",", "in", i, ".", d, "=");
      if (c.lo == c.hi) {
        absl::StrAppend(&out, c.lo);
      } else {
        absl::StrAppend(&out, "[", c.lo, "..", c.hi, "]");
        if (c.divisor > 1) absl::StrAppend(&out, "%", c.divisor);
      }
    }
  }
  return out.empty() ? "static" : out;
}

void FunctionImpl::WritePlanRecord(const Variant& v, const std::string& shape_class,
                                   std::vector<std::string> kernel_keys) {
  proto::PlanRecord record;
  record.set_graph_hash(v.graph_hash);
  record.set_shape_class(shape_class);
  for (std::string& key : kernel_keys) record.add_kernel_keys(std::move(key));
  record.set_graph_name(name_);
  if (absl::Status s = runtime_->store().PutPlan(record); !s.ok()) {
    runtime_->logger().Log(LogLevel::kWarning,
                           absl::StrCat("pto: cannot write the plan record of '", name_, "' for ",
                                        shape_class, " to the kernel cache: ", s.ToString()));
  }
}

jit::PipelineOptions FunctionImpl::pipeline_options() const {
  jit::PipelineOptions o;
  o.device = &runtime_->device();
  o.logger = &runtime_->logger();
  o.log_passes = runtime_->options().log_passes;
  o.constant_inputs = is_constant_;
  return o;
}

absl::StatusOr<const FunctionImpl::Entry*> FunctionImpl::CompileFor(const Shapes& shapes,
                                                                    int64_t* values,
                                                                    std::vector<uint64_t>* queued) {
  std::lock_guard<std::mutex> lock(mu_);
  if (const Entry* e = Lookup(shapes, values)) return e;  // compiled by another caller meanwhile
  absl::StatusOr<const Variant*> variant = VariantFor(shapes);
  if (!variant.ok()) return variant.status();
  const Variant& v = **variant;
  if (!BindSymbols(v, shapes, values)) {
    return absl::InternalError("input shapes do not bind the variant chosen for them");
  }
  std::span<const int64_t> vals(values, v.symbols.size());
  if (static_cast<int>(entries_.size()) >= options_.max_shape_classes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "function '", name_, "' reached max_shape_classes (", options_.max_shape_classes,
        ") and a call needs another shape class; raise the limit or declare the dims dynamic with "
        "wider buckets"));
  }
  auto entry = std::make_unique<Entry>();
  entry->variant = &v;
  for (int i = 0; i < num_inputs_; ++i) {
    entry->first_shapes.emplace_back(shapes.dims[i], shapes.dims[i] + shapes.rank[i]);
  }
  entry->cls = jit::Classify(vals, v.symbols, lanes_);
  entry->shape_class = CanonicalShapeClass(v, entry->cls);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<jit::LoweredProgram> lowered = jit::Lower(v.graph, entry->cls, pipeline_options());
  if (!lowered.ok()) return lowered.status();
  for (const ir::KernelCall& call : lowered->tiles.calls) {
    entry->default_configs.push_back(call.kernel.config);
  }
  const std::vector<std::optional<proto::TuningRecord>> records =
      ApplyTuningRecords(entry->shape_class, *lowered);
  int64_t kernels = 0;
  const int64_t loads_before = runtime_->compiler().cache_loads();
  jit::KernelOrigin origin;
  origin.graph_name = name_;
  origin.shape_class = entry->shape_class;
  std::vector<std::string> kernel_keys;
  absl::StatusOr<std::unique_ptr<jit::Plan>> plan =
      jit::BuildPlan(*lowered, runtime_->compiler(), &kernels, origin, &kernel_keys,
                     /*persist=*/true, runtime_->threads());
  if (!plan.ok()) return plan.status();
  entry->current = *std::move(plan);
  entry->plan.store(entry->current.get(), std::memory_order_relaxed);
  entry->program = *std::move(lowered);
  WritePlanRecord(v, origin.shape_class, std::move(kernel_keys));
  for (int o : v.graph.outputs) entry->output_shapes.push_back(v.graph.nodes[o].shape);
  const auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  compile_nanos_.fetch_add(nanos);
  compiles_.fetch_add(1);
  kernels_compiled_.fetch_add(kernels);
  kernels_loaded_.fetch_add(runtime_->compiler().cache_loads() - loads_before);
  runtime_->logger().Log(
      LogLevel::kInfo,
      absl::StrCat("pto: compiled '", name_, "' for ", entry->cls.ToString(v.symbols), ": ",
                   entry->current->kernels.size(), " kernels in ", nanos / 1000000, " ms"));
  QueueTuning(*entry, vals, records, queued);
  // Publish a new table; the old one stays alive for calls that may still read it.
  auto table = std::make_unique<Table>();
  if (const Table* old = table_.load(std::memory_order_relaxed)) table->entries = old->entries;
  table->entries.push_back(entry.get());
  entries_.push_back(std::move(entry));
  table_.store(table.get(), std::memory_order_release);
  tables_.push_back(std::move(table));
  return entries_.back().get();
}

std::vector<std::optional<proto::TuningRecord>> FunctionImpl::ApplyTuningRecords(
    const std::string& shape_class, jit::LoweredProgram& program) {
  const size_t n = program.tiles.calls.size();
  std::vector<std::optional<proto::TuningRecord>> found(n);
  if (runtime_->options().tuning.retune && runtime_->tuning_service() != nullptr) return found;
  for (size_t c = 0; c < n; ++c) {
    ir::Kernel& kernel = program.tiles.calls[c].kernel;
    absl::StatusOr<std::optional<proto::TuningRecord>> record = runtime_->store().GetTuning(
        jit::TuningKeyOf(kernel, shape_class, runtime_->performance_fingerprint()));
    if (!record.ok() || !record->has_value()) continue;
    absl::StatusOr<ir::TileConfig> config =
        jit::ConfigFromRecord(**record, kernel, runtime_->device());
    if (!config.ok()) {
      runtime_->logger().Log(
          LogLevel::kWarning,
          absl::StrCat("pto: ignoring the tuning record of kernel ", kernel.name, " of '", name_,
                       "' for ", shape_class, ": ", config.status().ToString()));
      continue;
    }
    kernel.config = *config;
    if ((*record)->complete()) kernels_tuned_cached_.fetch_add(1);
    found[c] = *std::move(*record);
  }
  return found;
}

void FunctionImpl::QueueTuning(Entry& entry, std::span<const int64_t> values,
                               const std::vector<std::optional<proto::TuningRecord>>& records,
                               std::vector<uint64_t>* queued) {
  tuner::TuningService* service = runtime_->tuning_service();
  if (service == nullptr) return;
  const TuningOptions& t = runtime_->options().tuning;
  auto program = std::make_shared<jit::TuningProgram>(
      name_, entry.shape_class, entry.variant->graph, entry.cls, entry.program,
      std::vector<int64_t>(values.begin(), values.end()));
  const std::vector<int64_t> kernel_symbols = jit::ProgramSymbolValues(entry.program, values);
  // The overall budget is shared by each kernel's share of the work, with a floor: a small
  // kernel still needs the time to measure its default and try a few candidates.
  std::vector<double> work;
  for (const ir::KernelCall& call : entry.program.tiles.calls) {
    work.push_back(static_cast<double>(jit::KernelWork(call, kernel_symbols)));
  }
  const double floor = std::max(1.0, *std::max_element(work.begin(), work.end()) / 10);
  for (size_t c = 0; c < entry.program.tiles.calls.size(); ++c) {
    const ir::KernelCall& call = entry.program.tiles.calls[c];
    const std::optional<proto::TuningRecord>& record = records[c];
    if (record.has_value() && record->complete()) continue;  // tuned already (kernels_tuned_cached)
    jit::KernelTuningJobOptions o;
    o.strategy = static_cast<tuner::StrategyKind>(t.strategy);
    o.seed = t.seed + c;
    o.max_trials = t.trials_per_kernel;  // seconds: the service's allowance (JobEnd::kBudgetSpent)
    o.space_default = entry.default_configs[c];
    o.compare.min_improvement = t.min_improvement;
    if (record.has_value()) o.resumed_trials = record->trials();
    o.yield_to_calls = runtime_->calls_to_yield_to();
    o.logger = &runtime_->logger();
    KernelTuning initial;
    initial.function = name_;
    initial.shape_class = entry.shape_class;
    initial.kernel = call.kernel.name;
    initial.max_trials = t.trials_per_kernel;
    const int index = runtime_->AddTuning(initial);
    Entry* e = &entry;
    RuntimeImpl* rt = runtime_.get();
    const int ci = static_cast<int>(c);
    auto job = std::make_unique<jit::KernelTuningJob>(
        program, ci, &runtime_->compiler(), runtime_->device(), runtime_->tuning_threads(), o,
        [this, e](int k, const ir::TileConfig& config) { PublishTuned(*e, k, config); },
        [rt, index](const KernelTuning& state) { rt->UpdateTuning(index, state); },
        [this, e, ci](const KernelTuning& result, const ir::TileConfig& best, tuner::JobEnd end) {
          if (result.default_seconds > 0) {
            WriteTuningRecord(*e, ci, result, best, end == tuner::JobEnd::kCompleted);
          }
        });
    const uint64_t id = service->Submit(std::move(job), std::max(work[c], floor));
    if (id == 0) continue;
    tuning_jobs_.push_back(id);
    if (queued != nullptr) queued->push_back(id);
  }
}

void FunctionImpl::PublishTuned(Entry& entry, int call, const ir::TileConfig& config) {
  std::lock_guard<std::mutex> lock(mu_);
  ir::Kernel& kernel = entry.program.tiles.calls[call].kernel;
  const ir::TileConfig previous = kernel.config;
  kernel.config = config;
  jit::KernelOrigin origin;
  origin.graph_name = name_;
  origin.shape_class = entry.shape_class;
  std::vector<std::string> kernel_keys;
  int64_t compiled = 0;
  absl::StatusOr<std::unique_ptr<jit::Plan>> plan = jit::BuildPlan(
      entry.program, runtime_->compiler(), &compiled, origin, &kernel_keys, /*persist=*/false);
  if (!plan.ok()) {
    kernel.config = previous;
    runtime_->logger().Log(LogLevel::kWarning,
                           absl::StrCat("pto: cannot swap in the tuned kernel ", kernel.name,
                                        " of '", name_, "': ", plan.status().ToString()));
    return;
  }
  // Candidates compile without being cached; the winner is written now for the next process.
  runtime_->compiler().Persist(
      kernel, *std::static_pointer_cast<const jit::CompiledKernel>((*plan)->code[call]), origin);
  (*plan)->SharePackedOf(*entry.current);
  WritePlanRecord(*entry.variant, entry.shape_class, std::move(kernel_keys));
  std::unique_ptr<const jit::Plan> old = std::move(entry.current);
  entry.current = *std::move(plan);
  entry.plan.store(entry.current.get(), std::memory_order_release);
  runtime_->plan_epochs().Retire(std::move(old));
  plans_swapped_.fetch_add(1);
  runtime_->logger().Log(LogLevel::kInfo, absl::StrCat("pto: swapped in a tuned ", kernel.name,
                                                       " for '", name_, "' ", entry.shape_class));
}

void FunctionImpl::WriteTuningRecord(const Entry& entry, int call, const KernelTuning& result,
                                     const ir::TileConfig& best, bool complete) {
  ir::Kernel kernel;
  {
    std::lock_guard<std::mutex> lock(mu_);
    kernel = entry.program.tiles.calls[call].kernel;
    kernel.config = entry.default_configs[call];
  }
  const TuningOptions& t = runtime_->options().tuning;
  const std::string found_by =
      absl::StrCat(tuner::StrategyName(static_cast<tuner::StrategyKind>(t.strategy)),
                   " seed=", t.seed + static_cast<uint64_t>(call), " trials=", result.trials, "/",
                   result.max_trials, " ended=", result.ended);
  absl::StatusOr<proto::TuningRecord> record =
      jit::MakeTuningRecord(kernel, entry.shape_class, runtime_->performance_fingerprint(),
                            runtime_->device(), best, result, found_by, complete);
  if (!record.ok()) return;
  if (absl::Status s = runtime_->store().PutTuning(*record); !s.ok()) {
    runtime_->logger().Log(LogLevel::kWarning,
                           absl::StrCat("pto: cannot write the tuning record of ", kernel.name,
                                        " of '", name_, "': ", s.ToString()));
  }
}

void FunctionImpl::WaitForJobs(const std::vector<uint64_t>& jobs) {
  tuner::TuningService* service = runtime_->tuning_service();
  if (service == nullptr || runtime_->options().tuning.mode != TuningMode::kBlocking) return;
  for (uint64_t id : jobs) service->Wait(id, std::numeric_limits<double>::infinity());
}

absl::Status FunctionImpl::RefreshConstants(absl::Span<const TensorView> inputs) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!constants_stale_.load()) return absl::OkStatus();
  auto set = std::make_unique<ConstantSet>();
  set->data.resize(num_inputs_);
  for (int i = 0; i < num_inputs_; ++i) {
    if (!is_constant_[i]) continue;
    const size_t bytes = static_cast<size_t>(inputs[i].num_elements()) * sizeof(float);
    if (!set->data[i].Reserve(bytes)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", bytes, " bytes for constant input ", i));
    }
    if (bytes > 0) std::memcpy(set->data[i].data(), inputs[i].data, bytes);
  }
  constants_.store(set.get(), std::memory_order_release);
  constant_sets_.push_back(std::move(set));
  constants_stale_.store(false);
  return absl::OkStatus();
}

absl::Status FunctionImpl::Run(const Entry& entry, absl::Span<const TensorView> inputs,
                               absl::Span<const TensorView> outputs, const int64_t* values,
                               KernelTimes* kernels) {
  const std::span<const int64_t> vals(values, entry.variant->symbols.size());
  if (absl::Status s = ops::CheckShapeGuards(entry.variant->graph.guards, vals); !s.ok()) return s;
  if (outputs.size() != entry.output_shapes.size()) {
    return absl::InvalidArgumentError(absl::StrCat("function '", name_, "' produces ",
                                                   entry.output_shapes.size(), " outputs, got ",
                                                   outputs.size(), " output views"));
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    const TensorView& t = outputs[o];
    if (absl::Status s = CheckView(t, "output", static_cast<int>(o)); !s.ok()) return s;
    const ir::Shape& shape = entry.output_shapes[o];
    bool same = static_cast<int>(shape.size()) == t.rank;
    for (int d = 0; same && d < t.rank; ++d) same = shape[d].Evaluate(vals) == t.shape[d];
    if (!same) {
      return absl::InvalidArgumentError(absl::StrCat("output ", o, ": shape ", t.ShapeString(),
                                                     " does not match the result shape ",
                                                     ShapeString(shape, vals)));
    }
  }
  if (absl::Status s = CheckOutputsDisjoint(inputs, outputs); !s.ok()) return s;
  void* in[kMaxInputs];
  void* out[kMaxInputs];
  if (outputs.size() > static_cast<size_t>(kMaxInputs)) {
    return absl::InvalidArgumentError("too many outputs");
  }
  const ConstantSet* constants = constants_.load(std::memory_order_acquire);
  for (int i = 0; i < num_inputs_; ++i) {
    in[i] = is_constant_[i] ? constants->data[i].data() : inputs[i].data;
  }
  for (size_t o = 0; o < outputs.size(); ++o) out[o] = outputs[o].data;
  const device::EpochGuard guard = runtime_->plan_epochs().Enter();
  const jit::Plan* plan = entry.plan.load(std::memory_order_acquire);
  if (kernels == nullptr) return plan->Run(vals, in, out, runtime_->threads());
  kernels->names.clear();
  for (const jit::PlanKernel& k : plan->kernels) kernels->names.push_back(k.name);
  kernels->seconds.assign(plan->kernels.size(), 0.0);
  return plan->Run(vals, in, out, runtime_->threads(), kernels->seconds.data());
}

absl::StatusOr<std::vector<KernelProfile>> FunctionImpl::Profile(
    absl::Span<const TensorView> inputs, absl::Span<const TensorView> outputs, int calls) {
  if (calls < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Profile of '", name_, "': calls must be at least 1, got ", calls));
  }
  if (absl::Status s = Call(inputs, outputs); !s.ok()) return s;  // compiles, checks the views
  const Shapes shapes = ShapesOfViews(inputs);
  int64_t values[jit::kMaxSymbols];
  const Entry* entry = Lookup(shapes, values);
  if (entry == nullptr) return absl::InternalError("the shape class just called is not installed");
  // A tuned plan swapped in between calls may have other kernels: profile one plan's runs only.
  calls_.fetch_add(calls, std::memory_order_relaxed);  // each profiled run is a call
  KernelTimes run;
  std::vector<std::string> first;
  std::vector<std::vector<double>> times;
  for (int c = 0; c < calls; ++c) {
    if (absl::Status s = Run(*entry, inputs, outputs, values, &run); !s.ok()) return s;
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
    profile.push_back({first[k], t[t.size() / 2], 0});
    total += profile.back().seconds;
  }
  for (KernelProfile& p : profile) p.share = total > 0 ? p.seconds / total : 0;
  return profile;
}

absl::Status FunctionImpl::Call(absl::Span<const TensorView> inputs,
                                absl::Span<const TensorView> outputs) {
  calls_.fetch_add(1, std::memory_order_relaxed);
  if (absl::Status s = ValidateInputs(inputs); !s.ok()) return s;
  const Shapes shapes = ShapesOfViews(inputs);
  if (constants_stale_.load(std::memory_order_acquire)) {
    if (absl::Status s = RefreshConstants(inputs); !s.ok()) return s;
  }
  int64_t values[jit::kMaxSymbols];
  const Entry* entry = Lookup(shapes, values);
  if (entry == nullptr) {
    std::vector<uint64_t> queued;
    absl::StatusOr<const Entry*> compiled = CompileFor(shapes, values, &queued);
    if (!compiled.ok()) return compiled.status();
    entry = *compiled;
    WaitForJobs(queued);
  }
  if (!runtime_->options().record_workload) return Run(*entry, inputs, outputs, values);
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = Run(*entry, inputs, outputs, values);
  Entry& e = const_cast<Entry&>(*entry);  // the counters are the only mutable part
  e.calls.fetch_add(1, std::memory_order_relaxed);
  e.call_nanos.fetch_add(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count(),
      std::memory_order_relaxed);
  return status;
}

absl::StatusOr<const FunctionImpl::Variant*> FunctionImpl::TracedVariant(
    absl::Span<const std::vector<int64_t>> input_shapes, int64_t* values) {
  absl::StatusOr<Shapes> shapes = ShapesOf(input_shapes);
  if (!shapes.ok()) return shapes.status();
  std::lock_guard<std::mutex> lock(mu_);
  absl::StatusOr<const Variant*> variant = VariantFor(*shapes);
  if (!variant.ok()) return variant.status();
  if (!BindSymbols(**variant, *shapes, values)) {
    return absl::InternalError("input shapes do not bind the variant traced for them");
  }
  return variant;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> FunctionImpl::OutputShapes(
    absl::Span<const std::vector<int64_t>> input_shapes) {
  int64_t values[jit::kMaxSymbols];
  absl::StatusOr<const Variant*> variant = TracedVariant(input_shapes, values);
  if (!variant.ok()) return variant.status();
  std::span<const int64_t> vals(values, (*variant)->symbols.size());
  if (absl::Status s = ops::CheckShapeGuards((*variant)->graph.guards, vals); !s.ok()) return s;
  return EvaluateOutputShapes((*variant)->graph, vals);
}

absl::StatusOr<std::vector<Tensor>> FunctionImpl::CallAllocating(
    absl::Span<const TensorView> inputs) {
  if (absl::Status s = ValidateInputs(inputs); !s.ok()) return s;
  std::vector<std::vector<int64_t>> in_shapes;
  for (const TensorView& t : inputs) in_shapes.emplace_back(t.dims().begin(), t.dims().end());
  absl::StatusOr<std::vector<std::vector<int64_t>>> out_shapes = OutputShapes(in_shapes);
  if (!out_shapes.ok()) return out_shapes.status();
  absl::StatusOr<std::vector<Tensor>> outs = AllocateOutputs(*out_shapes);
  if (!outs.ok()) return outs.status();
  std::vector<TensorView> views;
  for (const Tensor& t : *outs) views.push_back(t.view());
  if (absl::Status s = Call(inputs, views); !s.ok()) return s;
  return outs;
}

absl::Status FunctionImpl::Precompile(absl::Span<const std::vector<int64_t>> input_shapes) {
  absl::StatusOr<Shapes> shapes = ShapesOf(input_shapes);
  if (!shapes.ok()) return shapes.status();
  int64_t values[jit::kMaxSymbols];
  if (Lookup(*shapes, values) != nullptr) return absl::OkStatus();
  std::vector<uint64_t> queued;
  absl::StatusOr<const Entry*> compiled = CompileFor(*shapes, values, &queued);
  if (!compiled.ok()) return compiled.status();
  WaitForJobs(queued);
  return absl::OkStatus();
}

absl::StatusOr<jit::LoweredProgram> FunctionImpl::LowerFor(
    absl::Span<const std::vector<int64_t>> input_shapes) {
  int64_t values[jit::kMaxSymbols];
  absl::StatusOr<const Variant*> variant = TracedVariant(input_shapes, values);
  if (!variant.ok()) return variant.status();
  std::span<const int64_t> vals(values, (*variant)->symbols.size());
  return jit::Lower((*variant)->graph, jit::Classify(vals, (*variant)->symbols, lanes_),
                    pipeline_options());
}

absl::StatusOr<std::string> FunctionImpl::Dump(
    Stage stage, absl::Span<const std::vector<int64_t>> input_shapes) {
  absl::StatusOr<jit::LoweredProgram> p = LowerFor(input_shapes);
  if (!p.ok()) return p.status();
  switch (stage) {
    case Stage::kTensor:
      return p->graph.ToString();
    case Stage::kTile:
      return p->tiles.ToString();
    case Stage::kBlock: {
      std::string out;
      std::vector<std::string> names = p->graph.SymbolNames();
      int threads = runtime_->threads() ? runtime_->threads()->threads() : 1;
      for (const ir::KernelCall& c : p->tiles.calls) {
        std::array<ir::SymExpr, 2> grid = ir::KernelGrid(c.kernel);
        absl::StrAppend(&out, c.kernel.name, ": grid [", grid[0].ToString(names), ", ",
                        grid[1].ToString(names), "] grain [", c.kernel.config.tile_rows, ", ",
                        c.kernel.config.tile_cols, "] work/cell ", c.work_per_cell.ToString(names),
                        " threads ", threads, "\n");
      }
      return out;
    }
    case Stage::kExec: {
      std::string out = "buffers:\n" + jit::BufferPlanToString(p->tiles, p->buffers) + "calls:\n";
      for (const ir::KernelCall& c : p->tiles.calls) {
        absl::StrAppend(&out, "  ", c.kernel.name, "(");
        for (size_t s = 0; s < c.buffers.size(); ++s) {
          const ir::Buffer& b = p->tiles.buffers[c.buffers[s]];
          const char* kind = b.kind == ir::BufferKind::kInput    ? "in"
                             : b.kind == ir::BufferKind::kOutput ? "out"
                             : b.kind == ir::BufferKind::kPacked ? "packed in"
                                                                 : "slot";
          const int index =
              b.kind == ir::BufferKind::kTemp ? p->buffers.slot_of[c.buffers[s]] : b.index;
          absl::StrAppend(&out, s ? ", " : "", kind, index);
        }
        absl::StrAppend(&out, ")\n");
      }
      return out;
    }
    case Stage::kLlvm:
    case Stage::kAsm: {
      std::string out;
      for (const ir::KernelCall& c : p->tiles.calls) {
        absl::StatusOr<std::string> text = stage == Stage::kLlvm
                                               ? runtime_->compiler().EmitLlvmIr(c.kernel, true)
                                               : runtime_->compiler().EmitAssembly(c.kernel);
        if (!text.ok()) return text.status();
        out += *text;
      }
      return out;
    }
  }
  return absl::InvalidArgumentError("unknown stage");
}

void FunctionImpl::InvalidateConstants() { constants_stale_.store(true); }

std::vector<proto::WorkloadEntry> FunctionImpl::Workload() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<proto::WorkloadEntry> result;
  for (size_t vi = 0; vi < variants_.size(); ++vi) {
    const Variant& v = *variants_[vi];
    proto::WorkloadEntry entry;
    for (const std::unique_ptr<Entry>& e : entries_) {
      if (e->variant != &v) continue;
      bool empty = false;  // a call with a size-0 dim has nothing to tune
      for (const std::vector<int64_t>& shape : e->first_shapes) {
        for (int64_t d : shape) empty = empty || d == 0;
      }
      if (empty) continue;
      proto::WorkloadShapeClass* c = entry.add_shape_classes();
      c->set_shape_class(e->shape_class);
      for (const std::vector<int64_t>& shape : e->first_shapes) {
        proto::WorkloadTensorShape* t = c->add_input_shapes();
        for (int64_t d : shape) t->add_dims(d);
      }
      c->set_calls(e->calls.load(std::memory_order_relaxed));
      c->set_total_seconds(e->call_nanos.load(std::memory_order_relaxed) * 1e-9);
    }
    if (entry.shape_classes_size() == 0) continue;
    entry.set_name(variants_.size() == 1 ? name_ : absl::StrCat(name_, "#", vi));
    *entry.mutable_graph() = graph::ToGraphDef(v.graph);
    entry.mutable_graph()->set_name(entry.name());
    for (int c : options_.constant_inputs) entry.add_constant_inputs(c);
    result.push_back(std::move(entry));
  }
  return result;
}

FunctionStats FunctionImpl::stats() const {
  FunctionStats s;
  s.calls = calls_.load();
  s.traces = traces_.load();
  s.compiles = compiles_.load();
  s.kernels_compiled = kernels_compiled_.load();
  s.kernels_loaded = kernels_loaded_.load();
  const Table* t = table_.load();
  s.shape_classes = t ? static_cast<int64_t>(t->entries.size()) : 0;
  s.compile_seconds = compile_nanos_.load() * 1e-9;
  s.plans_swapped = plans_swapped_.load();
  s.kernels_tuned_cached = kernels_tuned_cached_.load();
  return s;
}

}  // namespace pto::detail
