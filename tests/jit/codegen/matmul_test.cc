#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace pto::jit::testing {
namespace {

using device::Isa;
using ir::ExprOp;
using ir::SymExpr;

constexpr float kSentinel = 12345.f;

struct MatMulCase {
  int64_t batch, m, n, k;
  bool transpose_a = false;
  bool broadcast_b = false;  // B shared by all batch entries (batch stride 0)
};

// C[b,m,n] = epilogue(sum_k A[b,m,k] B[b,k,n]); domain [s0, s1, s2] (batch, M, N), K = s3.
// A is [b][m][k] (or [b][k][m] when transposed), B is [b][k][n].
// With `epilogue`: out = gelu_tanh(acc + bias[n]) + residual[b,m,n].
ir::Kernel MatMulKernel(bool transpose_a, bool broadcast_b, bool epilogue, int mr, int nrv, int vw,
                        const std::string& name) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kMatMul;
  k.name = name;
  k.num_buffers = 5;
  const SymExpr B = SymExpr::Symbol(0), M = SymExpr::Symbol(1), N = SymExpr::Symbol(2),
                K = SymExpr::Symbol(3);
  k.domain = {B, M, N};
  k.k = K;
  k.config.mr = mr;
  k.config.nr_vectors = nrv;
  k.config.vector_width = vw;
  ir::Access a = transpose_a ? MakeAccess(0, {M * K, 1, 0, M}) : MakeAccess(0, {M * K, K, 0, 1});
  ir::Access b = MakeAccess(1, {broadcast_b ? SymExpr(0) : K * N, 0, 1, N});
  k.accesses = {a, b, MakeAccess(2, {M * N, N, 1}), MakeAccess(3, {0, 0, 1}),
                MakeAccess(4, {M * N, N, 1})};
  k.a = 0;
  k.b = 1;
  Program p;
  int v = p.Acc();
  if (epilogue) {
    v = p.Bin(ExprOp::kAdd, p.Un(ExprOp::kGeluTanh, p.Bin(ExprOp::kAdd, v, p.Load(3))), p.Load(4));
  }
  k.output = p.nodes();
  k.stores = {{2, v}};
  return k;
}

double GeluTanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

void CheckMatMul(pto_kernel_fn fn, const MatMulCase& c, bool epilogue, int64_t tile0, int64_t tile1,
                 const std::string& what) {
  const int64_t bn = c.batch, m = c.m, n = c.n, kk = c.k;
  std::vector<float> a = RandomVector(bn * m * kk + 1, 31), b = RandomVector(bn * kk * n + 1, 32);
  std::vector<float> bias = RandomVector(n + 1, 33), res = RandomVector(bn * m * n + 1, 34);
  std::vector<float> out(bn * m * n + 1, kSentinel);
  RunGrid(fn, {a.data(), b.data(), out.data(), bias.data(), res.data()}, {bn, m, n, kk}, bn * m, n,
          tile0, tile1);
  for (int64_t x = 0; x < bn; ++x) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t l = 0; l < kk; ++l) {
          const float av = c.transpose_a ? a[x * m * kk + l * m + i] : a[x * m * kk + i * kk + l];
          const float bv = b[(c.broadcast_b ? 0 : x * kk * n) + l * n + j];
          acc += static_cast<double>(av) * bv;
        }
        if (epilogue) acc = GeluTanh(acc + bias[j]) + res[x * m * n + i * n + j];
        ASSERT_NEAR(out[x * m * n + i * n + j], acc, 1e-5 * (4 + kk))
            << what << " at " << x << "," << i << "," << j << " of " << bn << "x" << m << "x" << n
            << " k " << kk;
      }
    }
  }
  ASSERT_EQ(out[bn * m * n], kSentinel);
}

TEST(MatMulTest, ShapesTilesAndMicroKernels) {
  const std::vector<MatMulCase> cases = {{1, 1, 1, 1},     {1, 3, 17, 5}, {1, 17, 33, 9},
                                         {1, 33, 100, 17}, {1, 4, 16, 1}, {2, 5, 19, 7},
                                         {3, 6, 8, 3}};
  struct Config {
    int mr, nrv, vw;
  };
  for (Config cfg : {Config{4, 2, 0}, Config{3, 3, 0}, Config{1, 1, 0}, Config{6, 2, 4}}) {
    const std::string name = "mm_" + std::to_string(cfg.mr) + "x" + std::to_string(cfg.nrv) +
                             "_vw" + std::to_string(cfg.vw);
    absl::StatusOr<CompiledObject> c = CompileKernel(
        EngineFor(Isa::kAvx512), MatMulKernel(false, false, false, cfg.mr, cfg.nrv, cfg.vw, name));
    ASSERT_TRUE(c.ok()) << c.status();
    for (const MatMulCase& mc : cases) {
      CheckMatMul(c->entry, mc, false, 0, 0, name);
      CheckMatMul(c->entry, mc, false, 5, 11, name + " split");
    }
  }
}

TEST(MatMulTest, TransposedABroadcastBAndEpilogue) {
  for (Isa isa : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
    for (bool ta : {false, true}) {
      for (bool bb : {false, true}) {
        const std::string name =
            std::string("mm_epi_") + device::IsaName(isa) + (ta ? "_ta" : "") + (bb ? "_bb" : "");
        absl::StatusOr<CompiledObject> c =
            CompileKernel(EngineFor(isa), MatMulKernel(ta, bb, true, 4, 2, 0, name));
        ASSERT_TRUE(c.ok()) << c.status();
        for (MatMulCase mc : std::vector<MatMulCase>{{1, 17, 33, 9}, {2, 5, 19, 7}, {3, 1, 3, 1}}) {
          mc.transpose_a = ta;
          mc.broadcast_b = bb;
          CheckMatMul(c->entry, mc, true, 0, 0, name);
          CheckMatMul(c->entry, mc, true, 3, 8, name + " split");
        }
      }
    }
  }
}

TEST(MatMulTest, ZeroExtents) {
  absl::StatusOr<CompiledObject> c =
      CompileKernel(EngineFor(Isa::kAvx512), MatMulKernel(false, false, true, 4, 2, 0, "mm_zero"));
  ASSERT_TRUE(c.ok()) << c.status();
  // K = 0: out = gelu(0 + bias) + residual.
  CheckMatMul(c->entry, {2, 3, 17, 0}, true, 0, 0, "k0");
  // M = 0 or N = 0 or batch = 0: nothing written.
  for (MatMulCase mc : std::vector<MatMulCase>{{1, 0, 5, 3}, {1, 5, 0, 3}, {0, 5, 5, 3}}) {
    CheckMatMul(c->entry, mc, true, 0, 0, "empty");
  }
}

TEST(MatMulTest, AssemblyUsesVectorFma) {
  ir::Kernel k = MatMulKernel(false, false, false, 4, 2, 0, "mm_asm");
  const std::string avx2 = KernelAssembly(k, TargetFor(Isa::kAvx2));
  EXPECT_NE(avx2.find("vfmadd"), std::string::npos);
  EXPECT_NE(avx2.find("ymm"), std::string::npos);
  EXPECT_EQ(avx2.find("zmm"), std::string::npos);
  const std::string sse2 = KernelAssembly(k, TargetFor(Isa::kSse2));
  EXPECT_EQ(sse2.find("vfmadd"), std::string::npos);
  EXPECT_EQ(sse2.find("ymm"), std::string::npos);
  EXPECT_NE(sse2.find("mulps"), std::string::npos);
  if (HostTarget().isa == Isa::kAvx512) {
    const std::string avx512 = KernelAssembly(k, TargetFor(Isa::kAvx512));
    EXPECT_NE(avx512.find("vfmadd"), std::string::npos);
    EXPECT_NE(avx512.find("zmm"), std::string::npos);
  }
}

}  // namespace
}  // namespace pto::jit::testing
