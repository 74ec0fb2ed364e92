#include "tests/jit/e2e/test_util.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "device/device_info.h"
#include "gtest/gtest.h"
#include "jit/codegen/codegen_target.h"
#include "jit/codegen/emit_kernel.h"
#include "jit/orc/object_code.h"
#include "jit/reference_runner.h"
#include "jit/trace.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace pto::testing {

std::unique_ptr<Runtime> OpenRuntime(RuntimeOptions options) {
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(std::move(options));
  if (!rt.ok()) return nullptr;
  return *std::move(rt);
}

std::unique_ptr<Runtime> OpenRuntimeForIsa(TargetIsa isa) {
  RuntimeOptions options;
  options.isa = isa;
  std::unique_ptr<Runtime> rt = OpenRuntime(options);
  if (rt == nullptr && isa == TargetIsa::kHost) ADD_FAILURE() << "the host runtime must open";
  return rt;
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
  // i32 inputs are passed from int32 copies of their values.
  std::vector<std::vector<int32_t>> ints(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype != ir::DType::kI32) continue;
    ints[i] = inputs[i].I32Values();
    views[i] = TensorView::Dense(ints[i].data(), inputs[i].shape);
  }
  absl::StatusOr<std::vector<Tensor>> out = fn(views);
  if (!out.ok()) return out.status();
  std::vector<ops::HostTensor> result;
  for (const Tensor& t : *out) {
    std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
    if (t.dtype() == DType::kI32) {
      result.push_back(ops::HostTensor::I32(
          shape, std::vector<int32_t>(t.i32_data(), t.i32_data() + t.num_elements())));
      continue;
    }
    ops::HostTensor h;
    h.shape = std::move(shape);
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

std::string DiffFromReference(Function& fn, const TraceFn& trace,
                              const std::vector<ops::HostTensor>& inputs, ops::Tolerance tol) {
  absl::StatusOr<std::vector<ops::HostTensor>> got = RunPto(fn, inputs);
  if (!got.ok()) return absl::StrCat("pto: ", got.status().ToString());
  absl::StatusOr<std::vector<ops::HostTensor>> want = RunReference(trace, inputs);
  if (!want.ok()) return absl::StrCat("reference: ", want.status().ToString());
  return Compare(*got, *want, tol);
}

absl::StatusOr<jit::LoweredProgram> LowerStatic(const TraceFn& trace,
                                                const std::vector<std::vector<int64_t>>& shapes,
                                                const jit::FusionOptions& fusion) {
  static const device::DeviceInfo device = device::DetectHost();
  return LowerStatic(trace, shapes, device, {}, fusion);
}

absl::StatusOr<jit::LoweredProgram> LowerStatic(const TraceFn& trace,
                                                const std::vector<std::vector<int64_t>>& shapes,
                                                const device::DeviceInfo& device,
                                                const std::vector<int>& constant_inputs,
                                                const jit::FusionOptions& fusion) {
  std::vector<jit::TraceInput> inputs;
  for (const std::vector<int64_t>& s : shapes) {
    jit::TraceInput in;
    for (int64_t d : s) in.shape.push_back(ir::SymExpr(d));
    inputs.push_back(in);
  }
  absl::StatusOr<ir::Graph> g = jit::Trace(trace, inputs, {});
  if (!g.ok()) return g.status();
  jit::PipelineOptions options;
  options.device = &device;
  options.constant_inputs.assign(shapes.size(), false);
  for (int i : constant_inputs) options.constant_inputs[i] = true;
  options.fusion = fusion;
  return jit::Lower(*g, jit::ShapeClass{}, options);
}

absl::StatusOr<std::string> ProgramAssembly(const jit::LoweredProgram& program,
                                            const device::DeviceInfo& device) {
  const jit::CodegenTarget target = jit::CodegenTarget::FromDevice(device);
  std::string text;
  for (const ir::KernelCall& call : program.tiles.calls) {
    llvm::LLVMContext context;
    absl::StatusOr<std::unique_ptr<llvm::Module>> module =
        jit::EmitKernel(call.kernel, target, context);
    if (!module.ok()) return module.status();
    absl::StatusOr<std::string> assembly = jit::EmitAssembly(**module, target);
    if (!assembly.ok()) return assembly.status();
    text += *assembly;
  }
  return text;
}

device::DeviceInfo Avx512Device() {
  device::DeviceInfo d;
  d.vendor = "GenuineIntel";
  d.cpu_name = "x86-64-v4";
  d.isa = device::Isa::kAvx512;
  d.has_fma = true;
  d.vector_bits = 512;
  d.vector_registers = 32;
  d.l1d_bytes = 48 << 10;
  d.l2_bytes = 2 << 20;
  d.l3_bytes = 260 << 20;
  d.cores = 2;
  return d;
}

}  // namespace pto::testing
