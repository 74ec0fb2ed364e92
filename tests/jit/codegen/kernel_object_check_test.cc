// What a kernel object may contain before the JIT linker sees it (jit/orc/kernel_object_check.h),
// on objects built with LLVM the way a cache or bundle could hold them.
#include "jit/orc/kernel_object_check.h"

#include <string>
#include <vector>

#include "crafted_object.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/orc/orc_engine.h"
#include "kernel_test_util.h"

namespace pto::jit::testing {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kAllowed = {"memset", "memcpy", "memmove"};

std::string Craft(const std::string& symbol, const CraftedObject& extras) {
  absl::StatusOr<std::string> object = CraftObject(symbol, extras);
  EXPECT_TRUE(object.ok()) << object.status();
  return object.ok() ? *object : "";
}

void ExpectRefused(const std::string& object, const std::string& why) {
  const absl::Status s = CheckKernelObject(object, "crafted", kAllowed);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("kernel object for 'crafted' refused: " + why));
}

TEST(KernelObjectCheckTest, KernelsPass) {
  EXPECT_TRUE(CheckKernelObject(Craft("crafted", {}), "crafted", kAllowed).ok());
  EXPECT_TRUE(CheckKernelObject(Craft("crafted", {.call = "memset"}), "crafted", kAllowed).ok());
  // A generated kernel (its checked form calls the fault handler, allowed in its engine).
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = "obj_check_exp";
  k.num_buffers = 2;
  k.domain = {ir::SymExpr::Symbol(0)};
  k.accesses = {MakeAccess(0, {1}), MakeAccess(1, {1})};
  Program p;
  const int v = p.Un(ir::ExprOp::kExp, p.Load(0));
  k.output = p.nodes();
  k.stores = {{1, v}};
  k.buffer_extents = {{ir::SymExpr::Symbol(0), "input 0"}, {ir::SymExpr::Symbol(0), "output 0"}};
  OrcEngine& engine = CheckedEngineFor(device::DetectHost().isa);
  absl::StatusOr<CompiledObject> c = CompileKernel(engine, k, {.bounds_checks = true});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(CheckKernelObject(c->object, k.name, engine.allowed_symbols()).ok());
  const absl::Status unchecked = CheckKernelObject(c->object, k.name, kAllowed);
  EXPECT_EQ(unchecked.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(unchecked.message()), HasSubstr("'pto_kernel_bounds_fault'"));
}

TEST(KernelObjectCheckTest, RefusesFunctionsOffTheAllowList) {
  for (const char* name : {"getpid", "system", "dlopen"}) {
    ExpectRefused(Craft("crafted", {.call = name}),
                  std::string("it references undefined symbol '") + name +
                      "', which is not on the allow-list (memset, memcpy, memmove)");
  }
}

TEST(KernelObjectCheckTest, RefusesDefinitionsBesideTheKernel) {
  // memcpy defined here would be what every later kernel's memcpy resolves to.
  ExpectRefused(Craft("crafted", {.also_define = "memcpy"}),
                "it defines global symbol 'memcpy' (a kernel object defines only its kernel)");
  ExpectRefused(Craft("crafted", {.also_define = "f32_other_kernel"}),
                "it defines global symbol 'f32_other_kernel'");
  ExpectRefused(Craft("crafted", {.global_data = true}),
                "it defines global symbol 'pto_crafted_counter'");
}

TEST(KernelObjectCheckTest, RefusesInitializersAndThreadLocals) {
  ExpectRefused(Craft("crafted", {.initializer = true}),
                "an initializer or finalizer section '.");  // .ctors or .init_array
  ExpectRefused(Craft("crafted", {.thread_local_data = true}), "a thread-local");
}

TEST(KernelObjectCheckTest, RefusesRelocationsOutsideTheirSection) {
  const std::string object = Craft("crafted", {.call = "memset"});
  ASSERT_TRUE(CheckKernelObject(object, "crafted", kAllowed).ok());
  // JITLink would write the call's address 1 MiB past the code it allocated.
  absl::StatusOr<std::string> moved = WithRelocationOffset(object, ".text", 1 << 20);
  ASSERT_TRUE(moved.ok()) << moved.status();
  ExpectRefused(*moved, "a relocation at offset 1048576 of '.text', whose size is ");
}

TEST(KernelObjectCheckTest, MissingSymbolAndGarbage) {
  const absl::Status missing = CheckKernelObject(Craft("crafted", {}), "other", kAllowed);
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound) << missing;
  EXPECT_EQ(missing.message(), "kernel object does not define symbol 'other'");
  const absl::Status garbage = CheckKernelObject("not an object", "crafted", kAllowed);
  EXPECT_EQ(garbage.code(), absl::StatusCode::kInvalidArgument) << garbage;
}

// The engine checks before linking: a refused object leaves nothing behind, and a good one
// under the same name loads afterwards.
TEST(KernelObjectCheckTest, EngineRefusesBeforeLinking) {
  absl::StatusOr<std::unique_ptr<OrcEngine>> engine = OrcEngine::Create(HostTarget());
  ASSERT_TRUE(engine.ok()) << engine.status();
  absl::StatusOr<CompiledObject> bad =
      (*engine)->Load(Craft("crafted", {.also_define = "memcpy"}), "crafted");
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kFailedPrecondition) << bad.status();
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("defines global symbol 'memcpy'"));
  absl::StatusOr<CompiledObject> good = (*engine)->Load(Craft("crafted", {}), "crafted");
  ASSERT_TRUE(good.ok()) << good.status();
  float out = 0;
  float* buffers[] = {&out};
  pto_kernel_args args{reinterpret_cast<void* const*>(buffers), nullptr};
  const int64_t lo[2] = {0, 0}, hi[2] = {1, 1};
  good->entry(&args, lo, hi, nullptr);
  EXPECT_EQ(out, 1.f);
}

}  // namespace
}  // namespace pto::jit::testing
