#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "device/yield_point.h"
#include "gtest/gtest.h"
#include "jit/codegen/emit_kernel.h"
#include "jit/codegen/optimize.h"
#include "jit/orc/object_code.h"
#include "jit/orc/target_machine.h"
#include "kernel_test_util.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace pto::jit::testing {
namespace {

using ir::ExprOp;

// out[i] = exp(x[i]) * 2: enough code for a real pipeline.
ir::Kernel ExpKernel() {
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = "yield_exp";
  k.num_buffers = 2;
  k.domain = {ir::SymExpr::Symbol(0)};
  k.accesses = {MakeAccess(0, {1}), MakeAccess(1, {1})};
  Program p;
  int v = p.Bin(ExprOp::kMul, p.Un(ExprOp::kExp, p.Load(0)), p.Const(2.f));
  k.output = p.nodes();
  k.stores = {{1, v}};
  return k;
}

struct Counts {
  int optimize = 0;
  int codegen = 0;
  std::string object;
};

// Compiles ExpKernel to an object, counting hook calls in each phase.
Counts CompileCounting(bool with_hook) {
  Counts counts;
  int calls = 0;
  const std::function<void()> hook = [&calls] { ++calls; };
  const device::ScopedYieldHook scoped(with_hook ? &hook : nullptr);
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> module =
      EmitKernel(ExpKernel(), HostTarget(), context);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return counts;
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = CreateTargetMachine(HostTarget());
  EXPECT_TRUE(tm.ok()) << tm.status();
  if (!tm.ok()) return counts;
  OptimizeModule(**module, **tm);
  counts.optimize = calls;
  absl::StatusOr<std::string> object = EmitObject(**module, **tm);
  EXPECT_TRUE(object.ok()) << object.status();
  if (object.ok()) counts.object = *std::move(object);
  counts.codegen = calls - counts.optimize;
  return counts;
}

TEST(CompileYieldTest, HookRunsBetweenPassesOfBothPipelinesAndChangesNoCode) {
  const Counts with = CompileCounting(/*with_hook=*/true);
  // The O2 pipeline runs hundreds of passes over the kernel; codegen runs dozens of machine
  // passes per function, each followed by a yield (the legacy pass manager alone yields only
  // between its module-level passes: ~10 here).
  EXPECT_GT(with.optimize, 100);
  EXPECT_GT(with.codegen, 100);
  const Counts without = CompileCounting(/*with_hook=*/false);
  EXPECT_EQ(without.optimize, 0);
  EXPECT_EQ(without.codegen, 0);
  ASSERT_FALSE(with.object.empty());
  EXPECT_EQ(with.object, without.object);
}

TEST(CompileYieldTest, HookIsPerThreadAndScoped) {
  int calls = 0;
  const std::function<void()> outer = [&calls] { calls += 1; };
  const std::function<void()> inner = [&calls] { calls += 100; };
  {
    const device::ScopedYieldHook a(&outer);
    EXPECT_TRUE(device::HasYieldHook());
    {
      const device::ScopedYieldHook b(&inner);
      device::YieldPoint();
      EXPECT_EQ(calls, 100);
    }
    device::YieldPoint();
    EXPECT_EQ(calls, 101);
    bool other_thread_has_hook = true;
    std::thread([&] { other_thread_has_hook = device::HasYieldHook(); }).join();
    EXPECT_FALSE(other_thread_has_hook);
  }
  EXPECT_FALSE(device::HasYieldHook());
  device::YieldPoint();
  EXPECT_EQ(calls, 101);
}

}  // namespace
}  // namespace pto::jit::testing
