// Runtime::JitTrainStep and TrainStep. The step's Function takes the data inputs, then the
// parameters laid end to end in one flat vector, the optimizer's state tensors (each flat),
// and the step's scalars. Its trace views each parameter as a window of the flat vector
// (slice, reshape) and calls the loss lambda; the graph transform differentiates the loss with
// respect to those views, lays the gradients end to end and appends the update
// (jit/passes/append_optimizer_step.h). The new parameters and state are written in place.
#include <cstring>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/call_validation.h"
#include "jit/function_impl.h"
#include "jit/passes/append_optimizer_step.h"
#include "jit/passes/differentiate.h"
#include "jit/passes/recompute_cheap_values.h"
#include "jit/passes/recompute_checkpoints.h"
#include "pto/runtime.h"
#include "pto/train.h"

namespace pto {

class TrainStep::Impl {
 public:
  std::string name;
  std::unique_ptr<Function> fn;
  Optimizer optimizer;
  int num_data = 0;
  std::vector<std::vector<int64_t>> shapes;  // per parameter
  std::vector<int64_t> offsets;              // per parameter, into `flat`
  Tensor flat;
  std::vector<Tensor> state;
  Tensor scalars;
  Tensor loss;
  int64_t steps = 0;
  // The call's views, built once: the data slots are filled at each step.
  std::vector<TensorView> inputs, outputs;

  // Checks the data's count, puts the views in the call's inputs and fills the next step's
  // scalars.
  absl::Status Prepare(absl::Span<const TensorView> data);
};

namespace {

// The lambda's inputs that are data, in order (the parameters left out).
std::vector<int> DataInputs(int num_inputs, const std::vector<int>& parameters) {
  std::vector<bool> is_parameter(num_inputs, false);
  for (int p : parameters) is_parameter[p] = true;
  std::vector<int> data;
  for (int i = 0; i < num_inputs; ++i) {
    if (!is_parameter[i]) data.push_back(i);
  }
  return data;
}

absl::Status CheckStepOptions(const std::string& name, int num_inputs,
                              absl::Span<const TensorView> initial, const TrainStepOptions& step,
                              const FunctionOptions& options) {
  const std::string where = absl::StrCat("JitTrainStep '", name, "'");
  if (step.parameters.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": no parameters to train"));
  }
  std::vector<bool> seen(num_inputs, false);
  for (int p : step.parameters) {
    if (p < 0 || p >= num_inputs) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": parameter input ", p, " is out of range [0, ", num_inputs, ")"));
    }
    if (seen[p]) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": parameters list input ", p, " twice"));
    }
    seen[p] = true;
  }
  if (initial.size() != step.parameters.size()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", step.parameters.size(),
                                                   " parameters but ", initial.size(),
                                                   " initial values"));
  }
  for (size_t i = 0; i < initial.size(); ++i) {
    if (absl::Status s =
            detail::CheckTensorView(initial[i], "initial parameter", static_cast<int>(i));
        !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(where, ": ", s.message()));
    }
    if (initial[i].dtype != DType::kF32) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": initial parameter ", i, " is ",
                                                     DTypeName(initial[i].dtype),
                                                     "; parameters are f32"));
    }
  }
  for (const DynamicDim& d : options.dynamic) {
    if (d.input >= 0 && d.input < num_inputs && seen[d.input]) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": parameter input ", d.input, " cannot have a dynamic dim"));
    }
  }
  for (int c : options.constant_inputs) {
    if (c >= 0 && c < num_inputs && seen[c]) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": parameter input ", c, " cannot be constant"));
    }
  }
  if (!options.in_place_outputs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": in_place_outputs are the step's own (its parameters and state)"));
  }
  const Optimizer& o = step.optimizer;
  if (!(o.lr >= 0) || !(o.eps > 0 || o.kind == Optimizer::Kind::kSgd) ||
      !(o.beta1 >= 0 && o.beta1 < 1) || !(o.beta2 >= 0 && o.beta2 < 1) || !(o.max_grad_norm >= 0) ||
      (o.nesterov && (o.momentum <= 0 || o.dampening != 0))) {
    return absl::InvalidArgumentError(absl::StrCat(
        where,
        ": invalid optimizer settings (lr >= 0, eps > 0, betas in [0, 1), max_grad_norm "
        ">= 0; Nesterov needs momentum > 0 and no dampening)"));
  }
  return absl::OkStatus();
}

// The step Function's options: the lambda's data inputs renumbered, the outputs in place.
FunctionOptions StepFunctionOptions(const FunctionOptions& options, const std::vector<int>& data,
                                    int state_count) {
  FunctionOptions out = options;
  std::vector<int> renumber(data.empty() ? 0 : data.back() + 1, -1);
  for (size_t i = 0; i < data.size(); ++i) renumber[data[i]] = static_cast<int>(i);
  for (DynamicDim& d : out.dynamic) d.input = renumber[d.input];
  for (int& c : out.constant_inputs) c = renumber[c];
  const int flat = static_cast<int>(data.size());
  for (int k = 0; k <= state_count; ++k) out.in_place_outputs.push_back({1 + k, flat + k});
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TrainStep>> Runtime::JitTrainStepTraced(
    std::string name, int num_inputs, TraceFn trace, absl::Span<const TensorView> initial,
    TrainStepOptions step, FunctionOptions options) {
  if (absl::Status s = detail::RefuseInsideCallback(
          absl::StrCat("Runtime::JitTrainStep of function '", name, "' was called"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = detail::ValidateFunctionOptions(num_inputs, options); !s.ok()) return s;
  if (absl::Status s = CheckStepOptions(name, num_inputs, initial, step, options); !s.ok()) {
    return s;
  }
  auto impl = std::make_unique<TrainStep::Impl>();
  impl->name = name;
  impl->optimizer = step.optimizer;
  const std::vector<int> data = DataInputs(num_inputs, step.parameters);
  impl->num_data = static_cast<int>(data.size());
  int64_t total = 0;
  for (const TensorView& p : initial) {
    impl->shapes.emplace_back(p.dims().begin(), p.dims().end());
    impl->offsets.push_back(total);
    total += p.num_elements();
  }
  const int64_t flat_shape[1] = {total};
  impl->flat = Tensor::Allocate(flat_shape);
  for (size_t i = 0; i < initial.size(); ++i) {
    std::memcpy(impl->flat.data() + impl->offsets[i], initial[i].data,
                static_cast<size_t>(initial[i].num_elements()) * sizeof(float));
  }
  const int state_count = jit::OptimizerStateCount(step.optimizer);
  for (int k = 0; k < state_count; ++k) {
    impl->state.push_back(Tensor::Allocate(flat_shape));
    std::memset(impl->state.back().data(), 0, static_cast<size_t>(total) * sizeof(float));
  }
  const int64_t scalar_shape[1] = {jit::kOptimizerScalars};
  impl->scalars = Tensor::Allocate(scalar_shape);
  impl->loss = Tensor::Allocate(std::span<const int64_t>());

  // The trace: data and parameter views to the lambda; outputs the loss (as a scalar of rank
  // 0) and the views, which the transform differentiates with respect to and then drops.
  const int flat_input = impl->num_data;
  const std::vector<int> parameters = step.parameters;
  const std::vector<std::vector<int64_t>> shapes = impl->shapes;
  const std::vector<int64_t> offsets = impl->offsets;
  TraceFn lambda = [trace = std::move(trace), num_inputs, parameters, shapes, offsets,
                    flat_input](std::span<const Value> in) {
    std::vector<Value> args(num_inputs);
    std::vector<Value> views;
    for (size_t k = 0; k < parameters.size(); ++k) {
      int64_t n = 1;
      for (int64_t d : shapes[k]) n *= d;
      views.push_back(reshape(slice(in[flat_input], 0, offsets[k], offsets[k] + n), shapes[k]));
      args[parameters[k]] = views.back();
    }
    for (int i = 0, d = 0; i < num_inputs; ++i) {
      if (!args[i].valid()) args[i] = in[d++];
    }
    std::vector<Value> out = trace(args);
    std::vector<Value> result;
    if (!out.empty()) {
      Value loss = out[0];
      bool scalar = loss.rank() >= 0;
      for (int a = 0; a < loss.rank(); ++a) scalar = scalar && loss.static_dim(a) == 1;
      result.push_back(scalar ? reshape(loss, {}) : loss);
    }
    result.insert(result.end(), views.begin(), views.end());
    return result;
  };
  jit::OptimizerStepSpec spec;
  spec.optimizer = step.optimizer;
  spec.parameters_input = flat_input;
  spec.state_input = flat_input + 1;
  spec.scalars_input = flat_input + 1 + state_count;
  const int count = static_cast<int>(step.parameters.size());
  detail::GraphTransform transform = [spec, count, recompute = step.recompute_cheap_values](
                                         ir::Graph g) -> absl::StatusOr<ir::Graph> {
    if (static_cast<int>(g.outputs.size()) != 1 + count) {
      return absl::InvalidArgumentError("train step: the loss lambda returned no output");
    }
    const int forward_nodes = static_cast<int>(g.nodes.size());
    jit::GradientSpec gradient;
    gradient.wrt_nodes.assign(g.outputs.begin() + 1, g.outputs.end());
    absl::StatusOr<ir::Graph> d = jit::Differentiate(g, gradient);
    if (!d.ok()) return d.status();
    jit::OptimizerStepSpec with = spec;
    with.gradients.assign(d->outputs.end() - count, d->outputs.end());
    d->outputs.resize(1);
    if (absl::Status s = jit::AppendOptimizerStep(*d, with); !s.ok()) return s;
    jit::RecomputeCheckpoints(*d, forward_nodes);
    if (recompute) jit::RecomputeCheapValues(*d, forward_nodes);
    return d;
  };
  const int function_inputs = impl->num_data + 2 + state_count;
  impl->fn = std::make_unique<Function>(std::make_unique<detail::FunctionImpl>(
      impl_, std::move(name), function_inputs, std::move(lambda),
      StepFunctionOptions(options, data, state_count), std::move(transform)));
  impl->inputs.resize(function_inputs);
  impl->inputs[flat_input] = impl->flat.view();
  for (int k = 0; k < state_count; ++k) impl->inputs[flat_input + 1 + k] = impl->state[k].view();
  impl->inputs[flat_input + 1 + state_count] = impl->scalars.view();
  impl->outputs = {impl->loss.view(), impl->flat.view()};
  for (const Tensor& s : impl->state) impl->outputs.push_back(s.view());
  return std::make_unique<TrainStep>(std::move(impl));
}

TrainStep::TrainStep(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TrainStep::~TrainStep() = default;

absl::Status TrainStep::Impl::Prepare(absl::Span<const TensorView> data) {
  if (static_cast<int>(data.size()) != num_data) {
    return absl::InvalidArgumentError(absl::StrCat("train step '", name, "' takes ", num_data,
                                                   " data inputs, got ", data.size()));
  }
  for (int i = 0; i < num_data; ++i) inputs[i] = data[i];
  jit::FillOptimizerScalars(optimizer, steps + 1,
                            std::span<float>(scalars.data(), jit::kOptimizerScalars));
  return absl::OkStatus();
}

absl::StatusOr<float> TrainStep::operator()(absl::Span<const TensorView> data) {
  Impl& s = *impl_;
  if (absl::Status st = s.Prepare(data); !st.ok()) return st;
  if (absl::Status st = (*s.fn)(s.inputs, s.outputs); !st.ok()) return st;
  ++s.steps;
  return s.loss.data()[0];
}

absl::StatusOr<std::vector<KernelProfile>> TrainStep::Profile(absl::Span<const TensorView> data,
                                                              int steps) {
  Impl& s = *impl_;
  // Every profiled step takes the next step's scalars: the update's cost does not depend on
  // them.
  if (absl::Status st = s.Prepare(data); !st.ok()) return st;
  absl::StatusOr<std::vector<KernelProfile>> p = s.fn->Profile(s.inputs, s.outputs, steps);
  if (p.ok()) s.steps += steps + 1;
  return p;
}

int TrainStep::num_parameters() const { return static_cast<int>(impl_->shapes.size()); }

TensorView TrainStep::parameter(int i) const {
  if (i < 0 || i >= num_parameters()) return TensorView{};  // data null: no such parameter
  return TensorView::Dense(impl_->flat.data() + impl_->offsets[i], impl_->shapes[i]);
}

int64_t TrainStep::steps() const { return impl_->steps; }
float TrainStep::learning_rate() const { return impl_->optimizer.lr; }
void TrainStep::set_learning_rate(float lr) { impl_->optimizer.lr = lr; }
Function& TrainStep::function() { return *impl_->fn; }

}  // namespace pto
