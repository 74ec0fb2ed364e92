#include "tests/jit/e2e/test_util.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "device/device_info.h"
#include "jit/reference_runner.h"
#include "jit/trace.h"

namespace pto::testing {

std::unique_ptr<Runtime> OpenRuntime(RuntimeOptions options) {
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(std::move(options));
  if (!rt.ok()) return nullptr;
  return *std::move(rt);
}

std::vector<TensorView> Views(const std::vector<ops::HostTensor>& tensors) {
  std::vector<TensorView> views;
  for (const ops::HostTensor& t : tensors)
    views.push_back(TensorView::Dense(t.data.data(), t.shape));
  return views;
}

absl::StatusOr<std::vector<ops::HostTensor>> RunPto(Function& fn,
                                                    const std::vector<ops::HostTensor>& inputs) {
  std::vector<TensorView> views = Views(inputs);
  absl::StatusOr<std::vector<Tensor>> out = fn(views);
  if (!out.ok()) return out.status();
  std::vector<ops::HostTensor> result;
  for (const Tensor& t : *out) {
    ops::HostTensor h;
    h.shape.assign(t.dims().begin(), t.dims().end());
    h.data.resize(t.num_elements());
    if (!h.data.empty()) std::memcpy(h.data.data(), t.data(), h.data.size() * sizeof(float));
    result.push_back(std::move(h));
  }
  return result;
}

absl::StatusOr<std::vector<ops::HostTensor>> RunReference(
    const TraceFn& trace, const std::vector<ops::HostTensor>& inputs) {
  return jit::RunReferenceOf(trace, inputs);
}

std::string Compare(const std::vector<ops::HostTensor>& got,
                    const std::vector<ops::HostTensor>& want, ops::Tolerance tol) {
  if (got.size() != want.size())
    return absl::StrCat(got.size(), " outputs, expected ", want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    std::string mismatch;
    if (!ops::AllClose(got[i], want[i], tol, &mismatch))
      return absl::StrCat("output ", i, ": ", mismatch);
  }
  return "";
}

absl::StatusOr<jit::LoweredProgram> LowerStatic(const TraceFn& trace,
                                                const std::vector<std::vector<int64_t>>& shapes,
                                                const jit::FusionOptions& fusion) {
  std::vector<jit::TraceInput> inputs;
  for (const std::vector<int64_t>& s : shapes) {
    jit::TraceInput in;
    for (int64_t d : s) in.shape.push_back(ir::SymExpr(d));
    inputs.push_back(in);
  }
  absl::StatusOr<ir::Graph> g = jit::Trace(trace, inputs, {});
  if (!g.ok()) return g.status();
  static const device::DeviceInfo device = device::DetectHost();
  jit::PipelineOptions options;
  options.device = &device;
  options.fusion = fusion;
  return jit::Lower(*g, jit::ShapeClass{}, options);
}

}  // namespace pto::testing
