// Compiles in parallel: KernelCompiler::Compile from several threads at once (one codegen per
// distinct kernel, every caller gets that kernel), and BuildPlan's kernels compiled on a thread
// arena (the same plan, in the same order, as a serial build).
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "device/device_info.h"
#include "device/thread_arena.h"
#include "gtest/gtest.h"
#include "jit/kernel_compiler.h"
#include "jit/pipeline.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

// A program of several kernels (a matmul with its epilogue, a row op, elementwise ops) for
// this host.
jit::LoweredProgram Lowered() {
  TraceFn f = [](std::span<const Value> v) {
    Value h = pto::gelu(pto::matmul(v[0], v[1]) + v[2]);
    return std::vector<Value>{pto::softmax(h) * 2.0f, pto::exp(h) + v[2]};
  };
  absl::StatusOr<jit::LoweredProgram> lowered = testing::LowerStatic(f, {{37, 64}, {64, 50}, {50}});
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  return *std::move(lowered);
}

TEST(ParallelCompile, OneCodegenPerKernelWhateverTheCallers) {
  const device::DeviceInfo device = device::DetectHost();
  const jit::LoweredProgram program = Lowered();
  ASSERT_GE(program.tiles.calls.size(), 2u);
  auto compiler = jit::KernelCompiler::Create(device);
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  // Four threads per kernel, all at once: each kernel is compiled by one of them and the
  // others wait for it.
  const size_t kernels = program.tiles.calls.size();
  constexpr int kCallersPerKernel = 4;
  std::vector<std::shared_ptr<const jit::CompiledKernel>> got(kernels * kCallersPerKernel);
  std::vector<std::string> errors(got.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] {
      auto compiled = (*compiler)->Compile(program.tiles.calls[i % kernels].kernel);
      if (compiled.ok()) {
        got[i] = *compiled;
      } else {
        errors[i] = compiled.status().ToString();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NE(got[i], nullptr) << errors[i];
    EXPECT_EQ(got[i], got[i % kernels]) << "caller " << i << " got another compile";
  }
  EXPECT_EQ((*compiler)->codegen_runs(), static_cast<int64_t>(kernels));
  EXPECT_EQ((*compiler)->events().size(), kernels);
}

TEST(ParallelCompile, BuildPlanOnAnArenaMatchesTheSerialPlan) {
  const device::DeviceInfo device = device::DetectHost();
  const jit::LoweredProgram program = Lowered();
  auto serial_compiler = jit::KernelCompiler::Create(device);
  auto parallel_compiler = jit::KernelCompiler::Create(device);
  ASSERT_TRUE(serial_compiler.ok() && parallel_compiler.ok());
  auto serial = jit::BuildPlan(program, **serial_compiler);
  device::ThreadArena arena(2);
  auto parallel = jit::BuildPlan(program, **parallel_compiler, {.threads = &arena});
  ASSERT_TRUE(serial.ok()) << serial.status();
  ASSERT_TRUE(parallel.ok()) << parallel.status();
  EXPECT_EQ(parallel->kernels_compiled, serial->kernels_compiled);
  EXPECT_EQ(parallel->kernels_compiled, (*parallel_compiler)->codegen_runs());
  EXPECT_EQ(parallel->kernel_keys, serial->kernel_keys);
  ASSERT_EQ(parallel->plan->kernels.size(), serial->plan->kernels.size());
  for (size_t i = 0; i < serial->plan->kernels.size(); ++i) {
    EXPECT_EQ(parallel->plan->kernels[i].name, serial->plan->kernels[i].name) << "kernel " << i;
    EXPECT_NE(parallel->plan->kernels[i].fn, nullptr);
  }
  // A kernel that cannot compile fails the build with its own error, on the arena too.
  jit::LoweredProgram broken = program;
  bool broke = false;
  for (ir::KernelCall& call : broken.tiles.calls) {
    if (call.kernel.kind != ir::KernelKind::kMatMul) continue;
    call.kernel.a = 99;
    broke = true;
  }
  ASSERT_TRUE(broke);
  auto failed = jit::BuildPlan(broken, **parallel_compiler, {.threads = &arena});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  // The validator's message names the broken kernel.
  EXPECT_NE(failed.status().message().find("kernel 'f32_matmul"), std::string::npos)
      << failed.status();
}

}  // namespace
}  // namespace pto
