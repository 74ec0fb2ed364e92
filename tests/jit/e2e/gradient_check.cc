#include "tests/jit/e2e/gradient_check.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "jit/trace.h"
#include "ops/reference.h"
#include "tests/jit/e2e/test_util.h"

namespace pto::testing {
namespace {

// The elements of an n-element input to check.
std::vector<int64_t> Sample(int64_t n, int max_elements, std::mt19937_64& rng) {
  std::vector<int64_t> picked;
  if (n <= max_elements) {
    for (int64_t i = 0; i < n; ++i) picked.push_back(i);
    return picked;
  }
  picked = {0, n - 1};
  std::uniform_int_distribution<int64_t> pick(1, n - 2);
  while (static_cast<int>(picked.size()) < max_elements) picked.push_back(pick(rng));
  std::sort(picked.begin(), picked.end());
  picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
  return picked;
}

}  // namespace

absl::StatusOr<GradientCheckResult> CheckGradients(Runtime& rt, const TraceFn& loss,
                                                   const std::vector<ops::HostTensor>& inputs,
                                                   const std::vector<int>& wrt,
                                                   const GradientCheckOptions& options,
                                                   FunctionOptions function_options) {
  const int n = static_cast<int>(inputs.size());
  absl::StatusOr<std::unique_ptr<Function>> fn =
      rt.JitGradTraced("gradient_check", n, loss, {.wrt = wrt}, std::move(function_options));
  if (!fn.ok()) return fn.status();
  absl::StatusOr<std::vector<ops::HostTensor>> got = RunPto(**fn, inputs);
  if (!got.ok()) return got.status();

  // The forward program in double.
  std::vector<jit::TraceInput> trace_inputs;
  for (const ops::HostTensor& t : inputs) {
    jit::TraceInput in;
    for (int64_t d : t.shape) in.shape.push_back(ir::SymExpr(d));
    in.dtype = t.dtype;
    trace_inputs.push_back(std::move(in));
  }
  absl::StatusOr<ir::Graph> graph = jit::Trace(loss, trace_inputs, {});
  if (!graph.ok()) return graph.status();
  std::vector<ops::HostTensor> wide;
  for (const ops::HostTensor& t : inputs) wide.push_back(t.ToF64());
  auto evaluate = [&]() -> absl::StatusOr<double> {
    absl::StatusOr<std::vector<ops::HostTensor>> out =
        ops::RunReference(*graph, wide, nullptr, {.f64 = true});
    if (!out.ok()) return out.status();
    return (*out)[0].at(0);
  };

  GradientCheckResult result;
  absl::StatusOr<double> reference_loss = evaluate();
  if (!reference_loss.ok()) return reference_loss.status();
  result.loss_difference =
      std::fabs((*got)[0].at(0) - *reference_loss) / std::max(1.0, std::fabs(*reference_loss));

  const size_t first_gradient = got->size() - wrt.size();
  std::mt19937_64 rng(options.seed);
  for (size_t w = 0; w < wrt.size(); ++w) {
    const int input = wrt[w];
    const ops::HostTensor& grad = (*got)[first_gradient + w];
    for (int64_t e : Sample(inputs[input].NumElements(), options.max_elements, rng)) {
      const double x = wide[input].at(e);
      const double h = options.step * std::max(1.0, std::fabs(x));
      wide[input].Set(e, x + h);
      absl::StatusOr<double> up = evaluate();
      wide[input].Set(e, x - h);
      absl::StatusOr<double> down = evaluate();
      wide[input].Set(e, x);
      if (!up.ok()) return up.status();
      if (!down.ok()) return down.status();
      const double fd = (*up - *down) / (2 * h);
      const double g = grad.at(e);
      const double ratio = std::fabs(g - fd) / (options.atol + options.rtol * std::fabs(fd));
      ++result.elements;
      if (!(ratio <= result.worst_ratio)) {  // NaN counts as worst
        result.worst_ratio = std::isnan(ratio) ? INFINITY : ratio;
        result.worst = absl::StrFormat("input %d element %d: pto %.9g, finite difference %.9g",
                                       input, e, g, fd);
      }
    }
  }
  return result;
}

}  // namespace pto::testing
