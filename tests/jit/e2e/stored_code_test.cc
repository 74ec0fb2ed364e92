// Code stored in a real cache is checked before it is loaded (jit/orc/kernel_object_check.h):
// a kernel record whose object calls a function off the allow-list, or defines a symbol that
// would interpose on the process (memcpy), is refused with a warning, compiled again and its
// record rewritten; the next compiler loads the rewritten code. Code imported from a bundle
// lands in the store and takes the same path.
#include <cmath>
#include <string>
#include <vector>

#include "cache/bundle.h"
#include "cache/cache_store.h"
#include "device/device_info.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/kernel_compiler.h"
#include "jit/orc/object_code.h"
#include "tests/cache/cache_test_util.h"
#include "tests/jit/codegen/crafted_object.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ::testing::HasSubstr;

// The kernel of exp(x) * 2 + x on x [33].
ir::Kernel TestKernel() {
  const TraceFn f = [](std::span<const Value> v) {
    return std::vector<Value>{pto::exp(v[0]) * 2.0f + v[0]};
  };
  absl::StatusOr<jit::LoweredProgram> p = testing::LowerStatic(f, {{33}});
  EXPECT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->tiles.calls.size(), 1u);
  return p->tiles.calls.at(0).kernel;
}

struct Compiled {
  int64_t codegen_runs = 0;
  int64_t loads = 0;
  std::vector<std::string> warnings;
  bool correct = false;
};

// A new compiler on `store` compiles `kernel` and runs it.
Compiled CompileAndRun(cache::CacheStore& store, const ir::Kernel& kernel) {
  Compiled out;
  jit::KernelCompilerOptions options;
  options.store = &store;
  options.log = [&out](LogLevel level, std::string_view message) {
    if (level >= LogLevel::kWarning) out.warnings.emplace_back(message);
  };
  auto compiler = jit::KernelCompiler::Create(device::DetectHost(), options);
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  if (!compiler.ok()) return out;
  auto compiled = (*compiler)->Compile(kernel);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  if (!compiled.ok()) return out;
  out.codegen_runs = (*compiler)->codegen_runs();
  out.loads = (*compiler)->cache_loads();
  std::vector<float> x(33), y(33, 0.f);
  for (int i = 0; i < 33; ++i) x[i] = 0.1f * i - 1.f;
  std::vector<void*> buffers = {x.data(), y.data()};
  pto_kernel_args args{buffers.data(), nullptr};
  const std::array<ir::SymExpr, 2> grid = ir::KernelGrid(kernel);
  const int64_t lo[2] = {0, 0}, hi[2] = {grid[0].Evaluate({}), grid[1].Evaluate({})};
  (*compiled)->fn(&args, lo, hi, nullptr);
  out.correct = true;
  for (int i = 0; i < 33; ++i) {
    out.correct &= std::abs(y[i] - (std::exp(x[i]) * 2 + x[i])) < 1e-5f * (1 + std::abs(y[i]));
  }
  return out;
}

// The store's only kernel record.
proto::KernelRecord OnlyRecord(cache::CacheStore& store) {
  std::vector<proto::KernelRecord> records;
  EXPECT_TRUE(store
                  .Scan(cache::RecordKind::kKernel,
                        [&](const cache::ScannedRecord& r) {
                          records.emplace_back();
                          EXPECT_TRUE(records.back().ParseFromString(r.payload));
                        })
                  .ok());
  EXPECT_EQ(records.size(), 1u);
  return records.empty() ? proto::KernelRecord{} : records[0];
}

// A persistent store in `dir`.
std::unique_ptr<cache::CacheStore> OpenStore(const cache::testing::TempDir& dir,
                                             const std::string& name) {
  cache::CacheOptions options;
  options.path = dir.Sub(name);
  auto store = cache::OpenCache(options);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return nullptr;
  EXPECT_TRUE((*store)->persistent());
  return *std::move(store);
}

// Compiles the test kernel into `store`, then writes an object of its symbol with `extras`
// over its record's code. Returns the record as written.
proto::KernelRecord StoreCrafted(cache::CacheStore& store,
                                 const jit::testing::CraftedObject& extras) {
  const Compiled first = CompileAndRun(store, TestKernel());
  EXPECT_EQ(first.codegen_runs, 1);
  EXPECT_TRUE(first.correct);
  proto::KernelRecord record = OnlyRecord(store);
  absl::StatusOr<std::string> crafted = jit::testing::CraftObject(record.symbol(), extras);
  EXPECT_TRUE(crafted.ok()) << crafted.status();
  record.set_object(crafted.ok() ? *crafted : "");
  EXPECT_TRUE(store.PutKernel(record).ok());
  EXPECT_EQ(OnlyRecord(store).object(), record.object());
  return record;
}

// The next compiler on `store` refuses the crafted code of `record` (one warning containing
// `why`), compiles the kernel again and rewrites the record; the one after loads that code.
void ExpectRefusedAndRewritten(cache::CacheStore& store, const proto::KernelRecord& record,
                               const std::string& why) {
  const ir::Kernel kernel = TestKernel();
  const Compiled second = CompileAndRun(store, kernel);
  EXPECT_EQ(second.loads, 0);
  EXPECT_EQ(second.codegen_runs, 1);
  EXPECT_TRUE(second.correct);
  ASSERT_EQ(second.warnings.size(), 1u);
  EXPECT_THAT(second.warnings[0],
              HasSubstr("pto: the cache's code for kernel " + record.symbol() +
                        " was not loaded (FAILED_PRECONDITION: kernel object for '" +
                        record.symbol() + "' refused: " + why));
  EXPECT_THAT(second.warnings[0], HasSubstr("); compiling it again"));

  // Rewritten with the compiler's own code, which the next compiler loads.
  const proto::KernelRecord rewritten = OnlyRecord(store);
  EXPECT_NE(rewritten.object(), record.object());
  absl::StatusOr<std::vector<std::string>> undefined = jit::UndefinedSymbols(rewritten.object());
  ASSERT_TRUE(undefined.ok()) << undefined.status();
  for (const std::string& name : *undefined) {
    EXPECT_THAT(name, ::testing::AnyOf("memset", "memcpy", "memmove"));
  }
  const Compiled third = CompileAndRun(store, kernel);
  EXPECT_EQ(third.loads, 1);
  EXPECT_EQ(third.codegen_runs, 0);
  EXPECT_TRUE(third.correct);
  EXPECT_TRUE(third.warnings.empty());
}

void ExpectStoredObjectRefused(const jit::testing::CraftedObject& extras, const std::string& why) {
  cache::testing::TempDir dir;
  std::unique_ptr<cache::CacheStore> store = OpenStore(dir, "cache");
  ASSERT_NE(store, nullptr);
  const proto::KernelRecord record = StoreCrafted(*store, extras);
  ExpectRefusedAndRewritten(*store, record, why);
}

TEST(StoredCode, ObjectCallingGetpidIsRefusedAndRecompiled) {
  ExpectStoredObjectRefused({.call = "getpid"},
                            "it references undefined symbol 'getpid', which is not on the "
                            "allow-list (memset, memcpy, memmove)");
}

TEST(StoredCode, ObjectCallingSystemIsRefusedAndRecompiled) {
  ExpectStoredObjectRefused({.call = "system"}, "it references undefined symbol 'system'");
}

TEST(StoredCode, ObjectDefiningMemcpyIsRefusedAndRecompiled) {
  ExpectStoredObjectRefused({.also_define = "memcpy"},
                            "it defines global symbol 'memcpy' (a kernel object defines only "
                            "its kernel)");
}

TEST(StoredCode, ObjectWithAnInitializerIsRefusedAndRecompiled) {
  ExpectStoredObjectRefused({.initializer = true}, "an initializer or finalizer section '.");
}

// The same code shipped in an unsigned bundle and imported with --trust-unsigned-code: stored
// (the importer trusted it), then refused when it would be loaded.
TEST(StoredCode, CodeImportedFromABundleIsCheckedBeforeLoading) {
  cache::testing::TempDir dir;
  std::unique_ptr<cache::CacheStore> source = OpenStore(dir, "source");
  ASSERT_NE(source, nullptr);
  const proto::KernelRecord record = StoreCrafted(*source, {.call = "system"});
  absl::StatusOr<std::string> bundle = cache::ExportBundle(*source, {.with_code = true});
  ASSERT_TRUE(bundle.ok()) << bundle.status();

  std::unique_ptr<cache::CacheStore> store = OpenStore(dir, "imported");
  ASSERT_NE(store, nullptr);
  cache::ImportOptions options;
  options.trust_unsigned_code = true;
  options.codegen_fingerprint = record.codegen_fingerprint();
  options.compiler_fingerprint = record.compiler_fingerprint();
  absl::StatusOr<cache::ImportReport> report = cache::ImportBundle(*store, *bundle, options);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->kernels, 1);
  ASSERT_EQ(OnlyRecord(*store).object(), record.object());
  ExpectRefusedAndRewritten(*store, record, "it references undefined symbol 'system'");
}

}  // namespace
}  // namespace pto
