// The scatter_add kernel kind (jit/codegen/emit_scatter_add.cc) on its own: a kernel made by
// hand over [P, N, M, Q], run on tiles that split the result's rows and columns (each tile
// zeroes its block and adds the updates whose index falls in it, in index order), with indices
// out of range; and the structural errors ValidateKernel reports.
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "jit/codegen/emit_kernel.h"
#include "kernel_test_util.h"

namespace pto::jit::testing {
namespace {

using device::Isa;
using ir::SymExpr;

// P = 2 rows of N = 5 result rows, M = 7 positions, Q = 19 columns (two vectors and a tail).
constexpr int64_t kP = 2, kN = 5, kM = 7, kQ = 19;

ir::Kernel ScatterKernel() {
  ir::Kernel k;
  k.kind = ir::KernelKind::kScatterAdd;
  k.name = "scatter_add_by_hand";
  k.num_buffers = 3;
  k.domain = {SymExpr(kP), SymExpr(kN), SymExpr(kM), SymExpr(kQ)};
  const SymExpr zero(0);
  ir::Access updates{0, zero, {SymExpr(kM * kQ), zero, SymExpr(kQ), SymExpr(1)}};
  ir::Access indices{1, zero, {zero, zero, SymExpr(1), zero}, ir::DType::kI32};
  ir::Access out{2, zero, {SymExpr(kN * kQ), SymExpr(kQ), zero, SymExpr(1)}};
  k.accesses = {updates, indices, out};
  k.a = 0;
  k.b = 1;
  k.output = {ir::ExprNode{ir::ExprOp::kAcc}};
  k.stores = {{2, 0}};
  k.config.unroll = 2;
  return k;
}

TEST(ScatterAddKernel, TilesOfRowsAndColumnsSumInIndexOrder) {
  const ir::Kernel k = ScatterKernel();
  absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx2), k);
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<float> updates = RandomVector(kP * kM * kQ, 3);
  const std::vector<int32_t> idx = {4, 0, -1, 4, 5, 2, 4};  // repeats, and two out of range
  std::vector<float> idx_bits(kM);
  std::memcpy(idx_bits.data(), idx.data(), sizeof(int32_t) * kM);
  std::vector<float> want(kP * kN * kQ, 0.0f);
  for (int64_t p = 0; p < kP; ++p) {
    for (int64_t m = 0; m < kM; ++m) {
      if (idx[m] < 0 || idx[m] >= kN) continue;
      for (int64_t q = 0; q < kQ; ++q) {
        want[(p * kN + idx[m]) * kQ + q] += updates[(p * kM + m) * kQ + q];
      }
    }
  }
  // Whole grid, then tiles of 3 rows x 8 columns (rows cross the P boundary at 5).
  for (int64_t tile0 : {0, 3}) {
    std::vector<float> out(kP * kN * kQ, 12345.f);  // every element must be written
    RunGrid(c->entry, {updates.data(), idx_bits.data(), out.data()}, {}, kP * kN, kQ, tile0,
            tile0 == 0 ? 0 : 8);
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i], want[i]) << "tile rows " << tile0 << ", element " << i;
    }
  }
}

TEST(ScatterAddKernel, StructuralErrors) {
  auto expect = [](ir::Kernel k, const std::string& message) {
    const absl::Status s = ValidateKernel(k);
    ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_EQ(s.message(), "kernel 'scatter_add_by_hand': " + message);
  };
  ir::Kernel k = ScatterKernel();
  EXPECT_TRUE(ValidateKernel(k).ok());
  k.domain.pop_back();  // and the accesses with it: only the kind's own rule refuses it
  for (ir::Access& a : k.accesses) a.strides.pop_back();
  expect(k, "scatter_add needs the domain [P, N, M, Q]");
  k = ScatterKernel();
  k.b = 7;
  expect(k, "scatter_add's updates a and indices b must be access indices");
  k = ScatterKernel();
  k.accesses[1].dtype = ir::DType::kF32;
  expect(k, "scatter_add reads f32 updates and i32 indices");
  k = ScatterKernel();
  k.stores.push_back({2, 0});
  expect(k, "scatter_add stores its sum (output [acc]) through one store");
}

}  // namespace
}  // namespace pto::jit::testing
