#include "jit/orc/orc_engine.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "jit/codegen/emit_kernel.h"
#include "jit/orc/object_code.h"
#include "kernel_test_util.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace pto::jit::testing {
namespace {

using device::Isa;
using ir::ExprOp;

// out[i] = x[i] * c
ir::Kernel ScaleKernel(const std::string& name, float c) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = name;
  k.num_buffers = 2;
  k.domain = {ir::SymExpr::Symbol(0)};
  k.accesses = {MakeAccess(0, {1}), MakeAccess(1, {1})};
  Program p;
  int v = p.Bin(ExprOp::kMul, p.Load(0), p.Const(c));
  k.output = p.nodes();
  k.stores = {{1, v}};
  return k;
}

void ExpectScales(pto_kernel_fn fn, float c) {
  std::vector<float> x = RandomVector(37, 3), out(37, 0);
  RunGrid(fn, {x.data(), out.data()}, {37}, 1, 37);
  for (int i = 0; i < 37; ++i) ASSERT_EQ(out[i], x[i] * c);
}

TEST(OrcEngineTest, LoadCapturedObjectWithoutCodegen) {
  absl::StatusOr<std::unique_ptr<OrcEngine>> engine = OrcEngine::Create(HostTarget());
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<CompiledObject> c = CompileKernel(**engine, ScaleKernel("orc_scale", 3.f));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*engine)->codegen_runs(), 1);
  EXPECT_GT((*engine)->compile_time(), absl::ZeroDuration());
  ExpectScales(c->entry, 3.f);
  ASSERT_FALSE(c->object.empty());
  const std::string bytes = c->object;

  // Same symbol still loaded: refused.
  absl::StatusOr<CompiledObject> dup = (*engine)->Load(bytes, "orc_scale");
  EXPECT_EQ(dup.status().code(), absl::StatusCode::kAlreadyExists) << dup.status();

  c->handle.Reset();  // frees the code
  absl::StatusOr<CompiledObject> loaded = (*engine)->Load(bytes, "orc_scale");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*engine)->codegen_runs(), 1);  // no codegen on the load path
  ExpectScales(loaded->entry, 3.f);

  // Into a second engine (as from a cache in another process).
  absl::StatusOr<std::unique_ptr<OrcEngine>> other = OrcEngine::Create(HostTarget());
  ASSERT_TRUE(other.ok());
  absl::StatusOr<CompiledObject> again = (*other)->Load(bytes, "orc_scale");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*other)->codegen_runs(), 0);
  ExpectScales(again->entry, 3.f);

  again->handle.Reset();
  absl::StatusOr<CompiledObject> missing = (*other)->Load(bytes, "no_such_symbol");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.status();
  absl::StatusOr<CompiledObject> garbage = (*other)->Load("not an object", "orc_scale");
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument) << garbage.status();
}

TEST(OrcEngineTest, HandlesMayOutliveTheEngine) {
  CompiledObject kept;
  {
    absl::StatusOr<std::unique_ptr<OrcEngine>> engine = OrcEngine::Create(HostTarget());
    ASSERT_TRUE(engine.ok());
    absl::StatusOr<CompiledObject> c = CompileKernel(**engine, ScaleKernel("orc_outlive", 2.f));
    ASSERT_TRUE(c.ok()) << c.status();
    kept = std::move(*c);
  }
  EXPECT_TRUE(kept.handle.loaded());
  ExpectScales(kept.entry, 2.f);
}

TEST(OrcEngineTest, RefusesUndefinedSymbolsOutsideAllowList) {
  absl::StatusOr<std::unique_ptr<OrcEngine>> engine = OrcEngine::Create(HostTarget());
  ASSERT_TRUE(engine.ok());
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("calls_libm", *ctx);
  llvm::Type* f32 = llvm::Type::getFloatTy(*ctx);
  llvm::Type* ptr = llvm::PointerType::getUnqual(*ctx);
  llvm::FunctionCallee sinf =
      module->getOrInsertFunction("sinf", llvm::FunctionType::get(f32, {f32}, false));
  auto* fn =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(*ctx), {ptr}, false),
                             llvm::Function::ExternalLinkage, "calls_libm", *module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(*ctx, "entry", fn));
  llvm::Value* v = b.CreateLoad(f32, fn->getArg(0));
  b.CreateStore(b.CreateCall(sinf, {v}), fn->getArg(0));
  b.CreateRetVoid();
  absl::StatusOr<CompiledObject> c = (*engine)->Compile(std::move(module), std::move(ctx));
  ASSERT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition) << c.status();
  EXPECT_NE(c.status().message().find("'sinf'"), std::string::npos) << c.status();
}

TEST(OrcEngineTest, ConcurrentCompiles) {
  absl::StatusOr<std::unique_ptr<OrcEngine>> engine = OrcEngine::Create(HostTarget());
  ASSERT_TRUE(engine.ok());
  std::vector<absl::StatusOr<CompiledObject>> results;
  for (int t = 0; t < 4; ++t) results.emplace_back(absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      results[t] = CompileKernel(**engine, ScaleKernel("orc_par_" + std::to_string(t), t + 1.f));
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) {
    ASSERT_TRUE(results[t].ok()) << results[t].status();
    ExpectScales(results[t]->entry, t + 1.f);
  }
  EXPECT_EQ((*engine)->codegen_runs(), 4);
}

TEST(OrcEngineTest, OptimizedIrAndAssemblyText) {
  llvm::LLVMContext ctx;
  const CodegenTarget target = TargetFor(Isa::kAvx2);
  absl::StatusOr<std::unique_ptr<llvm::Module>> m =
      EmitKernel(ScaleKernel("orc_text", 3.f), target, ctx);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<std::string> ir = EmitOptimizedIR(**m, target);
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_NE(ir->find("define void @orc_text"), std::string::npos);
  EXPECT_NE(ir->find("<8 x float>"), std::string::npos);
  EXPECT_NE(ir->find("\"target-cpu\"=\"" + target.cpu_name + "\""), std::string::npos);
  const std::string sse = KernelAssembly(ScaleKernel("orc_text_sse", 3.f), TargetFor(Isa::kSse2));
  EXPECT_NE(sse.find("mulps"), std::string::npos);
  EXPECT_EQ(sse.find("ymm"), std::string::npos);
}

}  // namespace
}  // namespace pto::jit::testing
