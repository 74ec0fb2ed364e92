// RuntimeOptions::checked_kernels end to end: the demo's transformer block runs checked, the
// same bits as unchecked and within the reference's tolerance; checked kernels have names and
// cache keys of their own; a kernel of a lowered program whose input is shorter than it reads
// dies naming the kernel and the input.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "device/device_info.h"
#include "gtest/gtest.h"
#include "jit/kernel_compiler.h"
#include "ops/tolerance.h"
#include "tests/cache/cache_test_util.h"
#include "tests/jit/e2e/runtime_cache_util.h"
#include "tests/jit/e2e/test_util.h"
#include "tools/pto/transformer_block.h"

namespace pto {
namespace {

using ops::HostTensor;

std::vector<std::vector<HostTensor>> RunBlock(bool checked,
                                              const std::vector<std::vector<int64_t>>& shapes,
                                              std::vector<KernelEvent>* events) {
  RuntimeOptions options;
  options.checked_kernels = checked;
  options.intra_op_threads = 1;
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(options);
  EXPECT_NE(rt, nullptr);
  if (rt == nullptr) return {};
  const tools::BlockDims dims;
  const std::vector<std::vector<int64_t>> weights = tools::WeightShapes(dims);
  FunctionOptions fopts;
  fopts.dynamic = {{0, 0, Dim("batch", 1, 64)}, {0, 1, Dim("seq", 1, 1024)}};
  for (int i = 1; i <= static_cast<int>(weights.size()); ++i) fopts.constant_inputs.push_back(i);
  auto fn = rt->JitTraced("block", 1 + static_cast<int>(weights.size()),
                          tools::TransformerBlock(dims), fopts);
  EXPECT_TRUE(fn.ok()) << fn.status();
  if (!fn.ok()) return {};
  std::vector<std::vector<HostTensor>> outputs;
  for (const std::vector<int64_t>& shape : shapes) {
    std::vector<HostTensor> in = {HostTensor::Random(shape, 3)};
    for (size_t i = 0; i < weights.size(); ++i) {
      in.push_back(HostTensor::Random(weights[i], 100 + i, -0.1f, 0.1f));
    }
    auto got = testing::RunPto(**fn, in);
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok()) return {};
    if (checked) {
      auto want = testing::RunReference(tools::TransformerBlock(dims), in);
      EXPECT_TRUE(want.ok()) << want.status();
      const ops::Tolerance tol = ops::Combine(ops::OpTolerance(ir::OpKind::kMatMul, dims.ff),
                                              ops::OpTolerance(ir::OpKind::kLayerNorm, dims.model));
      if (want.ok()) {
        EXPECT_EQ(testing::Compare(*got, *want, tol), "") << shape[0] << "x" << shape[1];
      }
    }
    outputs.push_back(*std::move(got));
  }
  *events = rt->kernel_events();
  return outputs;
}

TEST(CheckedKernels, DemoBlockMatchesUncheckedAndReference) {
  // A sequence that is no multiple of a vector (one shape class: compiles take the time).
  const std::vector<std::vector<int64_t>> shapes = {{3, 50, 128}};
  std::vector<KernelEvent> checked_events, plain_events;
  const auto checked = RunBlock(true, shapes, &checked_events);
  const auto plain = RunBlock(false, shapes, &plain_events);
  ASSERT_EQ(checked.size(), shapes.size());
  ASSERT_EQ(plain.size(), shapes.size());
  for (size_t s = 0; s < shapes.size(); ++s) {
    ASSERT_EQ(checked[s].size(), plain[s].size());
    for (size_t o = 0; o < checked[s].size(); ++o) {
      ASSERT_EQ(checked[s][o].data.size(), plain[s][o].data.size());
      EXPECT_EQ(std::memcmp(checked[s][o].data.data(), plain[s][o].data.data(),
                            plain[s][o].data.size() * sizeof(float)),
                0)
          << "shape " << s << " output " << o;
    }
  }
  ASSERT_FALSE(checked_events.empty());
  for (const KernelEvent& e : checked_events) {
    EXPECT_TRUE(absl::EndsWith(e.kernel, "_checked")) << e.kernel;
  }
  for (const KernelEvent& e : plain_events) EXPECT_FALSE(absl::StrContains(e.kernel, "checked"));
}

// One cache, checked and unchecked runs: neither loads the other's code; each finds its own.
TEST(CheckedKernels, OwnCacheKeys) {
  cache::testing::TempDir dir;
  const std::string path = dir.Sub("cache");
  RuntimeOptions checked;
  checked.checked_kernels = true;
  const testing::CacheRun plain = testing::RunCacheTestProgram(path, {3});
  EXPECT_GT(plain.stats.llvm_codegen_runs, 0);
  const testing::CacheRun first = testing::RunCacheTestProgram(path, {3}, checked);
  EXPECT_EQ(first.stats.kernels_loaded, 0);
  EXPECT_GT(first.stats.llvm_codegen_runs, 0);
  EXPECT_EQ(testing::CompareWithReference(first.outputs[0], 3), "");
  const testing::CacheRun again = testing::RunCacheTestProgram(path, {3}, checked);
  EXPECT_EQ(again.stats.llvm_codegen_runs, 0);
  EXPECT_EQ(again.stats.kernels_loaded, first.stats.llvm_codegen_runs);
  for (const KernelEvent& e : again.events) EXPECT_TRUE(absl::EndsWith(e.kernel, "_checked"));
  int checked_records = 0, plain_records = 0;
  for (const cache::ScannedRecord& r : testing::ScanRecords(path, cache::RecordKind::kKernel)) {
    proto::KernelRecord record;
    ASSERT_TRUE(record.ParseFromString(r.payload));
    const bool is_checked = absl::EndsWith(record.compiler_fingerprint(), " checked");
    EXPECT_EQ(is_checked, absl::EndsWith(record.symbol(), "_checked")) << record.symbol();
    ++(is_checked ? checked_records : plain_records);
  }
  EXPECT_EQ(checked_records, first.stats.llvm_codegen_runs);
  EXPECT_EQ(plain_records, plain.stats.llvm_codegen_runs);
}

// The first kernel of exp(x) * 2 + x on x [4, 33], its input one row (33 elements) short,
// compiled checked by the kernel compiler and run: the fault names the kernel and input 0.
void RunWithShortInput() {
  const TraceFn f = [](std::span<const Value> v) {
    return std::vector<Value>{pto::exp(v[0]) * 2.0f + v[0]};
  };
  absl::StatusOr<jit::LoweredProgram> p = testing::LowerStatic(f, {{4, 33}});
  if (!p.ok()) return;
  ir::Kernel kernel = p->tiles.calls.at(0).kernel;
  kernel.buffer_extents.at(0).elements = 99;
  jit::KernelCompilerOptions options;
  options.checked_kernels = true;
  auto compiler = jit::KernelCompiler::Create(device::DetectHost(), options);
  if (!compiler.ok()) return;
  auto compiled = (*compiler)->Compile(kernel);
  if (!compiled.ok()) return;
  std::vector<float> x(132, 1.f), y(132);
  std::vector<void*> buffers = {x.data(), y.data()};
  pto_kernel_args args{buffers.data(), nullptr};
  const std::array<ir::SymExpr, 2> grid = ir::KernelGrid(kernel);
  const int64_t lo[2] = {0, 0}, hi[2] = {grid[0].Evaluate({}), grid[1].Evaluate({})};
  (*compiled)->fn(&args, lo, hi, nullptr);
}

TEST(CheckedKernelsDeathTest, LoweredKernelReadingPastItsInput) {
  EXPECT_DEATH(RunWithShortInput(),
               "pto: bounds fault in checked kernel f32_[a-z0-9_]+_checked: load from buffer 0 "
               "\\(input 0\\) at element [0-9]+, outside its 99 elements");
}

}  // namespace
}  // namespace pto
