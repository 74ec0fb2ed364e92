#include "kernel_test_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <string>

#include "device/aligned_buffer.h"
#include "gtest/gtest.h"
#include "jit/codegen/bounds_fault.h"
#include "jit/codegen/emit_kernel.h"
#include "jit/orc/object_code.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

namespace pto::jit::testing {

CodegenTarget HostTarget() { return CodegenTarget::FromDevice(device::DetectHost()); }

CodegenTarget TargetFor(device::Isa isa) {
  return CodegenTarget::FromDevice(device::RestrictIsa(device::DetectHost(), isa));
}

absl::StatusOr<CompiledObject> CompileKernel(OrcEngine& engine, const ir::Kernel& kernel,
                                             const CodegenOptions& options) {
  auto context = std::make_unique<llvm::LLVMContext>();
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      EmitKernel(kernel, engine.target(), options, *context);
  if (!module.ok()) return module.status();
  absl::StatusOr<CompiledObject> compiled = engine.Compile(std::move(*module), std::move(context));
  if (compiled.ok()) {  // every object stays within the allow-list
    absl::StatusOr<std::vector<std::string>> undefined = UndefinedSymbols(compiled->object);
    EXPECT_TRUE(undefined.ok()) << undefined.status();
    if (undefined.ok()) {
      const std::vector<std::string>& allowed = engine.allowed_symbols();
      for (const std::string& name : *undefined) {
        EXPECT_NE(std::find(allowed.begin(), allowed.end(), name), allowed.end())
            << kernel.name << " references " << name;
      }
    }
  }
  return compiled;
}

namespace {

OrcEngine& SharedEngine(const CodegenTarget& target, bool checked) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<OrcEngine>>* engines =
      new std::map<std::string, std::unique_ptr<OrcEngine>>();
  std::lock_guard<std::mutex> lock(mu);
  auto& e = (*engines)[target.cpu_name + ";" + target.features + (checked ? ";checked" : "")];
  if (e == nullptr) {
    OrcEngineOptions options;
    if (checked) options.runtime_symbols.push_back({kBoundsFaultSymbol, BoundsFaultAddress()});
    absl::StatusOr<std::unique_ptr<OrcEngine>> created = OrcEngine::Create(target, options);
    EXPECT_TRUE(created.ok()) << created.status();
    e = std::move(*created);
  }
  return *e;
}

}  // namespace

OrcEngine& EngineFor(device::Isa isa) { return SharedEngine(TargetFor(isa), /*checked=*/false); }
OrcEngine& CheckedEngineFor(device::Isa isa) {
  return SharedEngine(TargetFor(isa), /*checked=*/true);
}

CodegenTarget CompileOnlyTargetFor(device::Isa isa) {
  device::DeviceInfo host = device::DetectHost();
  if (static_cast<int>(isa) <= static_cast<int>(host.isa)) return TargetFor(isa);
  host.isa = isa;  // only AVX-512 is wider than another ISA
  host.cpu_name = "x86-64-v4";
  host.vector_bits = 512;
  host.vector_registers = 32;
  host.has_fma = true;
  return CodegenTarget::FromDevice(host);
}

OrcEngine& CompileOnlyEngineFor(device::Isa isa) {
  return SharedEngine(CompileOnlyTargetFor(isa), /*checked=*/false);
}

size_t CountOf(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

std::string KernelAssembly(const ir::Kernel& kernel, const CodegenTarget& target) {
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module = EmitKernel(kernel, target, context);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  absl::StatusOr<std::string> text = EmitAssembly(**module, target);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

std::string KernelIr(const ir::Kernel& kernel, const CodegenTarget& target) {
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module = EmitKernel(kernel, target, context);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  (*module)->print(os, nullptr);
  return os.str();
}

void RunRange(pto_kernel_fn fn, const std::vector<float*>& buffers,
              const std::vector<int64_t>& symbols, int64_t lo0, int64_t lo1, int64_t hi0,
              int64_t hi1, int64_t scratch_bytes) {
  std::vector<void*> ptrs(buffers.begin(), buffers.end());
  pto_kernel_args args{ptrs.data(), symbols.data()};
  const int64_t lo[2] = {lo0, lo1};
  const int64_t hi[2] = {hi0, hi1};
  // Filled with NaN so a kernel that reads scratch it did not write shows it.
  device::AlignedBuffer scratch;
  if (scratch_bytes > 0) {
    scratch.Reserve(static_cast<size_t>(scratch_bytes));
    std::fill_n(static_cast<float*>(scratch.data()), scratch_bytes / 4,
                std::numeric_limits<float>::quiet_NaN());
  }
  fn(&args, lo, hi, scratch.data());
}

void RunGrid(pto_kernel_fn fn, const std::vector<float*>& buffers,
             const std::vector<int64_t>& symbols, int64_t rows, int64_t cols, int64_t tile0,
             int64_t tile1, int64_t scratch_bytes) {
  if (rows == 0 || cols == 0) {  // an empty grid: the kernel must do nothing
    RunRange(fn, buffers, symbols, 0, 0, rows, cols, scratch_bytes);
    return;
  }
  const int64_t t0 = tile0 > 0 ? tile0 : std::max<int64_t>(rows, 1);
  const int64_t t1 = tile1 > 0 ? tile1 : std::max<int64_t>(cols, 1);
  for (int64_t r = 0; r < rows; r += t0) {
    for (int64_t c = 0; c < cols; c += t1) {
      RunRange(fn, buffers, symbols, r, c, std::min(rows, r + t0), std::min(cols, c + t1),
               scratch_bytes);
    }
  }
}

std::vector<float> RandomVector(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

double MaxScaledError(const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    const double err =
        std::abs(static_cast<double>(got[i]) - want[i]) / std::max(1.0, std::abs(want[i]));
    if (std::isnan(got[i]) != std::isnan(want[i])) return INFINITY;
    if (!std::isnan(err)) worst = std::max(worst, err);
  }
  return worst;
}

}  // namespace pto::jit::testing
