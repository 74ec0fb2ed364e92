// Kernel symbols (jit/kernel_symbol.h) as the kernel compiler gives them to kernels the pipeline
// lowers: dtype, kind and fused ops, tile shape, ISA, then the hash ("_checked" after it), on
// the host and on an AVX-512 device (compiled to assembly there, never run).
#include "jit/kernel_symbol.h"

#include <memory>
#include <regex>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "device/device_info.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/kernel_compiler.h"
#include "jit/pipeline.h"
#include "jit/trace.h"

namespace pto::jit {
namespace {

using ::testing::HasSubstr;

// An AVX-512 core with 32 vector registers, whatever the host is.
device::DeviceInfo Avx512Device() {
  device::DeviceInfo d = device::DetectHost();
  d.cpu_name = "x86-64-v4";
  d.isa = device::Isa::kAvx512;
  d.has_fma = true;
  d.vector_bits = 512;
  d.vector_registers = 32;
  return d;
}

// The first kernel of `kind` that the pipeline makes of `fn` over static inputs of `shapes`.
ir::Kernel Lowered(const TraceFn& fn, const std::vector<ir::Shape>& shapes, ir::KernelKind kind,
                   const device::DeviceInfo& device) {
  std::vector<TraceInput> in;
  for (const ir::Shape& shape : shapes) in.push_back({.shape = shape});
  absl::StatusOr<ir::Graph> graph = Trace(fn, in, {});
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return {};
  PipelineOptions options;
  options.device = &device;
  absl::StatusOr<LoweredProgram> lowered = Lower(*graph, ShapeClass{}, options);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  if (!lowered.ok()) return {};
  for (const ir::KernelCall& call : lowered->tiles.calls) {
    if (call.kernel.kind == kind) return call.kernel;
  }
  ADD_FAILURE() << "no kernel of kind " << static_cast<int>(kind);
  return {};
}

ir::Kernel MatMulAdd(const device::DeviceInfo& device) {
  return Lowered(
      [](std::span<const Value> v) { return std::vector<Value>{matmul(v[0], v[1]) + v[2]}; },
      {{64, 128}, {128, 64}, {64}}, ir::KernelKind::kMatMul, device);
}
ir::Kernel Elementwise(const device::DeviceInfo& device) {
  return Lowered(
      [](std::span<const Value> v) { return std::vector<Value>{exp(v[0]) * 2.0f + v[0]}; },
      {{33, 40}}, ir::KernelKind::kElementwise, device);
}
ir::Kernel Reduce(const device::DeviceInfo& device) {
  return Lowered(
      [](std::span<const Value> v) { return std::vector<Value>{reduce_sum(exp(v[0]), 1)}; },
      {{33, 40}}, ir::KernelKind::kReduce, device);
}
ir::Kernel RowOp(const device::DeviceInfo& device) {
  return Lowered([](std::span<const Value> v) { return std::vector<Value>{softmax(v[0] * 2.0f)}; },
                 {{33, 40}}, ir::KernelKind::kRowOp, device);
}

std::unique_ptr<KernelCompiler> Compiler(const device::DeviceInfo& device, bool checked = false) {
  KernelCompilerOptions options;
  options.checked_kernels = checked;
  absl::StatusOr<std::unique_ptr<KernelCompiler>> compiler =
      KernelCompiler::Create(device, options);
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  return compiler.ok() ? *std::move(compiler) : nullptr;
}

// `symbol` is `prefix` followed by a 16-digit hash (and "_checked" when `checked`).
void ExpectSymbol(const std::string& symbol, const std::string& prefix, bool checked = false) {
  const std::regex form(prefix + "[0-9a-f]{16}" + (checked ? "_checked" : ""));
  EXPECT_TRUE(std::regex_match(symbol, form)) << symbol << " is not " << prefix << "<hash>";
}

TEST(KernelSymbolTest, NamesDtypeKindFusedOpsTileShapeIsaThenHashOnAvx512) {
  const device::DeviceInfo device = Avx512Device();
  std::unique_ptr<KernelCompiler> compiler = Compiler(device);
  ASSERT_NE(compiler, nullptr);
  // The default configs for 32 registers of 16 lanes: a 6 x 4-vector micro-tile; 4 vectors
  // per step for elementwise and row ops, 2 for reductions.
  const struct {
    ir::Kernel kernel;
    std::string prefix;
  } cases[] = {
      {MatMulAdd(device), "f32_matmul_add_6x64_avx512_"},
      {Elementwise(device), "f32_elementwise_add_mul_exp_u4x16_avx512_"},
      {Reduce(device), "f32_reduce_exp_u2x16_avx512_"},
      {RowOp(device), "f32_softmax_mul_u4x16_avx512_"},
  };
  for (const auto& c : cases) {
    const std::string symbol = compiler->SymbolOf(c.kernel);
    ExpectSymbol(symbol, c.prefix);
    // The code is compiled under that symbol (for this ISA; it is not run on the host).
    absl::StatusOr<std::string> assembly = compiler->EmitAssembly(c.kernel);
    ASSERT_TRUE(assembly.ok()) << assembly.status();
    EXPECT_THAT(*assembly, HasSubstr("\n" + symbol + ":"));
    EXPECT_THAT(*assembly, HasSubstr("zmm")) << symbol;
  }
}

TEST(KernelSymbolTest, HostKernelsAreCompiledUnderTheirSymbols) {
  const device::DeviceInfo device = device::DetectHost();
  std::unique_ptr<KernelCompiler> compiler = Compiler(device);
  ASSERT_NE(compiler, nullptr);
  const std::string isa = device::IsaName(device.isa);
  const int lanes = device.f32_lanes();
  const ir::Kernel matmul = MatMulAdd(device);
  const ir::TileConfig& mc = matmul.config;
  const struct {
    ir::Kernel kernel;
    std::string prefix;
  } cases[] = {
      {matmul, absl::StrCat("f32_matmul_add_", mc.mr, "x", mc.nr_vectors * lanes, "_", isa, "_")},
      {Elementwise(device), absl::StrCat("f32_elementwise_add_mul_exp_u4x", lanes, "_", isa, "_")},
      {Reduce(device), absl::StrCat("f32_reduce_exp_u2x", lanes, "_", isa, "_")},
      {RowOp(device), absl::StrCat("f32_softmax_mul_u4x", lanes, "_", isa, "_")},
  };
  for (const auto& c : cases) {
    const std::string symbol = compiler->SymbolOf(c.kernel);
    ExpectSymbol(symbol, c.prefix);
    absl::StatusOr<std::shared_ptr<const CompiledKernel>> compiled = compiler->Compile(c.kernel);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    EXPECT_EQ((*compiled)->symbol, symbol);
    EXPECT_NE((*compiled)->fn, nullptr);
  }
}

TEST(KernelSymbolTest, CheckedKernelsEndInCheckedAfterTheHash) {
  const device::DeviceInfo device = device::DetectHost();
  std::unique_ptr<KernelCompiler> checked = Compiler(device, /*checked=*/true);
  std::unique_ptr<KernelCompiler> unchecked = Compiler(device);
  ASSERT_NE(checked, nullptr);
  ASSERT_NE(unchecked, nullptr);
  const ir::Kernel kernel = Elementwise(device);
  const std::string prefix = absl::StrCat("f32_elementwise_add_mul_exp_u4x", device.f32_lanes(),
                                          "_", device::IsaName(device.isa), "_");
  const std::string symbol = checked->SymbolOf(kernel);
  ExpectSymbol(symbol, prefix, /*checked=*/true);
  ExpectSymbol(unchecked->SymbolOf(kernel), prefix);
  // The checked kernel's description differs: so does its hash.
  EXPECT_NE(symbol.substr(prefix.size(), 16),
            unchecked->SymbolOf(kernel).substr(prefix.size(), 16));
}

TEST(KernelSymbolTest, TileShapeReadsVectorWidthZeroAsTheTargetsLanes) {
  const device::DeviceInfo device = Avx512Device();
  std::unique_ptr<KernelCompiler> compiler = Compiler(device);
  ASSERT_NE(compiler, nullptr);
  ir::Kernel matmul = MatMulAdd(device);
  matmul.config.mr = 6;
  matmul.config.nr_vectors = 2;
  matmul.config.vector_width = 0;
  EXPECT_EQ(KernelTileShape(matmul, device.f32_lanes()), "6x32");
  ExpectSymbol(compiler->SymbolOf(matmul), "f32_matmul_add_6x32_avx512_");
  matmul.config.vector_width = 8;
  EXPECT_EQ(KernelTileShape(matmul, device.f32_lanes()), "6x16");

  ir::Kernel row = RowOp(device);
  row.config.unroll = 2;
  row.config.vector_width = 0;
  EXPECT_EQ(KernelTileShape(row, 16), "u2x16");
  EXPECT_EQ(KernelTileShape(row, 8), "u2x8");
  row.config.vector_width = 4;
  EXPECT_EQ(KernelTileShape(row, 16), "u2x4");
  ExpectSymbol(compiler->SymbolOf(row), "f32_softmax_mul_u2x4_avx512_");
}

TEST(KernelSymbolTest, CodeChangesTheHashAndTheGrainDoesNot) {
  const device::DeviceInfo device = device::DetectHost();
  std::unique_ptr<KernelCompiler> compiler = Compiler(device);
  ASSERT_NE(compiler, nullptr);
  const ir::Kernel kernel = MatMulAdd(device);
  const std::string symbol = compiler->SymbolOf(kernel);
  // Another K unroll: the same tile shape, other code, so another hash.
  ir::Kernel unrolled = kernel;
  unrolled.config.unroll = kernel.config.unroll == 1 ? 2 : 1;
  const std::string other = compiler->SymbolOf(unrolled);
  EXPECT_NE(other, symbol);
  EXPECT_EQ(other.substr(0, other.size() - 16), symbol.substr(0, symbol.size() - 16));
  // The plan's grain is scheduling, not code.
  ir::Kernel regrained = kernel;
  regrained.config.tile_rows += 6;
  regrained.config.tile_cols = 0;
  EXPECT_EQ(compiler->SymbolOf(regrained), symbol);
}

TEST(KernelSymbolTest, UnnamedKernelsAreF32Kernel) {
  ir::Kernel kernel;
  kernel.kind = ir::KernelKind::kElementwise;
  kernel.config.unroll = 3;
  EXPECT_EQ(KernelSymbol(kernel, device::Isa::kAvx2, 8, 0xabc, /*checked=*/false),
            "f32_kernel_u3x8_avx2_0000000000000abc");
  kernel.name = "f32_relu";
  EXPECT_EQ(KernelSymbol(kernel, device::Isa::kSse2, 4, 0x1234567890abcdef, /*checked=*/true),
            "f32_relu_u3x4_sse2_1234567890abcdef_checked");
}

}  // namespace
}  // namespace pto::jit
