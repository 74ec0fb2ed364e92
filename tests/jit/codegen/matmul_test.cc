#include <cmath>
#include <regex>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace pto::jit::testing {
namespace {

using device::Isa;
using ir::ExprOp;
using ir::SymExpr;

constexpr float kSentinel = 12345.f;

// How B is stored per batch entry.
enum class BLayout {
  kKN,       // [K][N]: N stride 1 (broadcast form)
  kNK,       // [N][K]: K stride 1 (dot-product form)
  kStrided,  // [K][2N], every other column: N stride 2, K stride 2N (neither stride is 1)
};

struct MatMulCase {
  int64_t batch, m, n, k;
  bool transpose_a = false;
  bool broadcast_b = false;  // B shared by all batch entries (batch stride 0)
  BLayout b_layout = BLayout::kKN;
};

// Elements of B per batch entry.
int64_t BSize(BLayout layout, int64_t n, int64_t k) {
  return layout == BLayout::kStrided ? 2 * n * k : n * k;
}

// Element index of B[batch x][k l][n j] in the B buffer.
int64_t BIndex(const MatMulCase& c, int64_t x, int64_t l, int64_t j) {
  const int64_t base = c.broadcast_b ? 0 : x * BSize(c.b_layout, c.n, c.k);
  switch (c.b_layout) {
    case BLayout::kKN:
      return base + l * c.n + j;
    case BLayout::kNK:
      return base + j * c.k + l;
    case BLayout::kStrided:
      return base + l * 2 * c.n + 2 * j;
  }
  return 0;
}

struct MatMulOptions {
  bool transpose_a = false;
  bool broadcast_b = false;
  BLayout b_layout = BLayout::kKN;
  bool epilogue = false;
  int mr = 4, nrv = 2, vw = 0;
};

// C[b,m,n] = epilogue(sum_k A[b,m,k] B[b,k,n]); domain [s0, s1, s2] (batch, M, N), K = s3.
// A is [b][m][k] (or [b][k][m] when transposed), B per `b_layout`.
// With `epilogue`: out = gelu_tanh(acc + bias[n]) + residual[b,m,n].
ir::Kernel MatMulKernel(const MatMulOptions& o, const std::string& name) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kMatMul;
  k.name = name;
  k.num_buffers = 5;
  const SymExpr B = SymExpr::Symbol(0), M = SymExpr::Symbol(1), N = SymExpr::Symbol(2),
                K = SymExpr::Symbol(3);
  k.domain = {B, M, N};
  k.k = K;
  k.config.mr = o.mr;
  k.config.nr_vectors = o.nrv;
  k.config.vector_width = o.vw;
  ir::Access a = o.transpose_a ? MakeAccess(0, {M * K, 1, 0, M}) : MakeAccess(0, {M * K, K, 0, 1});
  const SymExpr batch_stride = o.broadcast_b ? SymExpr(0) : K * N;
  ir::Access b;
  switch (o.b_layout) {
    case BLayout::kKN:
      b = MakeAccess(1, {batch_stride, 0, 1, N});
      break;
    case BLayout::kNK:
      b = MakeAccess(1, {batch_stride, 0, K, 1});
      break;
    case BLayout::kStrided:
      b = MakeAccess(1, {batch_stride * 2, 0, 2, N * 2});
      break;
  }
  k.accesses = {a, b, MakeAccess(2, {M * N, N, 1}), MakeAccess(3, {0, 0, 1}),
                MakeAccess(4, {M * N, N, 1})};
  k.a = 0;
  k.b = 1;
  Program p;
  int v = p.Acc();
  if (o.epilogue) {
    v = p.Bin(ExprOp::kAdd, p.Un(ExprOp::kGeluTanh, p.Bin(ExprOp::kAdd, v, p.Load(3))), p.Load(4));
  }
  k.output = p.nodes();
  k.stores = {{2, v}};
  return k;
}

ir::Kernel MatMulKernel(bool transpose_a, bool broadcast_b, bool epilogue, int mr, int nrv, int vw,
                        const std::string& name) {
  MatMulOptions o;
  o.transpose_a = transpose_a;
  o.broadcast_b = broadcast_b;
  o.epilogue = epilogue;
  o.mr = mr;
  o.nrv = nrv;
  o.vw = vw;
  return MatMulKernel(o, name);
}

double GeluTanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

void CheckMatMul(pto_kernel_fn fn, const MatMulCase& c, bool epilogue, int64_t tile0, int64_t tile1,
                 const std::string& what) {
  const int64_t bn = c.batch, m = c.m, n = c.n, kk = c.k;
  std::vector<float> a = RandomVector(bn * m * kk + 1, 31),
                     b = RandomVector(bn * BSize(c.b_layout, n, kk) + 1, 32);
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
          const float bv = b[BIndex(c, x, l, j)];
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

// B stored [N, K] (K stride 1): the dot-product micro-kernel, over sizes 1, 3, 17, 33, 100,
// K both a multiple of the vector width and not, batched and batch-broadcast B, A with K
// stride 1 (vector loads) and A transposed (gathered along K), whole and split tile ranges.
TEST(MatMulTest, TransposedBShapesTilesAndMicroKernels) {
  const std::vector<MatMulCase> cases = {{1, 1, 1, 1},    {1, 3, 3, 3},       {1, 17, 33, 17},
                                         {1, 33, 17, 33}, {1, 100, 100, 100}, {1, 1, 100, 9},
                                         {1, 100, 1, 33}, {1, 4, 16, 16},     {1, 3, 17, 8},
                                         {2, 5, 19, 7},   {3, 6, 8, 3},       {2, 17, 3, 100}};
  struct Config {
    int mr, nrv, vw;
  };
  for (Config cfg :
       {Config{4, 2, 0}, Config{3, 3, 0}, Config{1, 1, 0}, Config{6, 2, 4}, Config{2, 3, 1}}) {
    for (bool ta : {false, true}) {
      for (bool bb : {false, true}) {
        const std::string name = "mmt_" + std::to_string(cfg.mr) + "x" + std::to_string(cfg.nrv) +
                                 "_vw" + std::to_string(cfg.vw) + (ta ? "_ta" : "") +
                                 (bb ? "_bb" : "");
        MatMulOptions o;
        o.transpose_a = ta;
        o.broadcast_b = bb;
        o.b_layout = BLayout::kNK;
        o.mr = cfg.mr;
        o.nrv = cfg.nrv;
        o.vw = cfg.vw;
        absl::StatusOr<CompiledObject> c =
            CompileKernel(EngineFor(Isa::kAvx512), MatMulKernel(o, name));
        ASSERT_TRUE(c.ok()) << c.status();
        for (MatMulCase mc : cases) {
          mc.transpose_a = ta;
          mc.broadcast_b = bb;
          mc.b_layout = BLayout::kNK;
          CheckMatMul(c->entry, mc, false, 0, 0, name);
          CheckMatMul(c->entry, mc, false, 5, 11, name + " split 5x11");
          CheckMatMul(c->entry, mc, false, 3, 1, name + " split 3x1");
        }
      }
    }
  }
}

// The dot-product form with the epilogue (bias + gelu + residual) on every ISA, and B with
// neither stride 1 (per-lane loads in the broadcast form).
TEST(MatMulTest, TransposedAndStridedBWithEpilogue) {
  for (Isa isa : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
    for (BLayout layout : {BLayout::kNK, BLayout::kStrided}) {
      for (bool ta : {false, true}) {
        for (bool bb : {false, true}) {
          const std::string name = std::string("mmt_epi_") + device::IsaName(isa) +
                                   (layout == BLayout::kNK ? "_nk" : "_strided") +
                                   (ta ? "_ta" : "") + (bb ? "_bb" : "");
          MatMulOptions o;
          o.transpose_a = ta;
          o.broadcast_b = bb;
          o.b_layout = layout;
          o.epilogue = true;
          absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), MatMulKernel(o, name));
          ASSERT_TRUE(c.ok()) << c.status();
          for (MatMulCase mc : std::vector<MatMulCase>{
                   {1, 17, 33, 9}, {2, 5, 19, 7}, {3, 1, 3, 1}, {1, 33, 100, 17}, {2, 3, 17, 33}}) {
            mc.transpose_a = ta;
            mc.broadcast_b = bb;
            mc.b_layout = layout;
            CheckMatMul(c->entry, mc, true, 0, 0, name);
            CheckMatMul(c->entry, mc, true, 3, 8, name + " split");
          }
        }
      }
    }
  }
}

TEST(MatMulTest, TransposedBZeroExtents) {
  MatMulOptions o;
  o.b_layout = BLayout::kNK;
  o.epilogue = true;
  absl::StatusOr<CompiledObject> c =
      CompileKernel(EngineFor(Isa::kAvx512), MatMulKernel(o, "mmt_zero"));
  ASSERT_TRUE(c.ok()) << c.status();
  MatMulCase k0{2, 3, 17, 0};
  k0.b_layout = BLayout::kNK;
  CheckMatMul(c->entry, k0, true, 0, 0, "k0");  // out = gelu(0 + bias) + residual
  for (MatMulCase mc : std::vector<MatMulCase>{{1, 0, 5, 3}, {1, 5, 0, 3}, {0, 5, 5, 3}}) {
    mc.b_layout = BLayout::kNK;
    CheckMatMul(c->entry, mc, true, 0, 0, "empty");
  }
}

TEST(MatMulTest, TransposedBAssemblyUsesVectorFma) {
  MatMulOptions o;
  o.b_layout = BLayout::kNK;
  ir::Kernel k = MatMulKernel(o, "mmt_asm");
  // The dot-product form (horizontal sums), not the broadcast form with gathered B.
  EXPECT_NE(KernelIr(k, TargetFor(Isa::kAvx2)).find("llvm.vector.reduce.fadd"), std::string::npos);
  EXPECT_EQ(KernelIr(MatMulKernel(MatMulOptions{}, "mm_ir"), TargetFor(Isa::kAvx2))
                .find("llvm.vector.reduce.fadd"),
            std::string::npos);
  const std::string avx2 = KernelAssembly(k, TargetFor(Isa::kAvx2));
  EXPECT_TRUE(std::regex_search(avx2, std::regex(R"(vfmadd\w*ps\s+[^\n]*%ymm)"))) << avx2;
  EXPECT_EQ(avx2.find("zmm"), std::string::npos);
  const std::string sse2 = KernelAssembly(k, TargetFor(Isa::kSse2));
  EXPECT_EQ(sse2.find("vfmadd"), std::string::npos);
  EXPECT_EQ(sse2.find("ymm"), std::string::npos);
  EXPECT_NE(sse2.find("mulps"), std::string::npos);
}

}  // namespace
}  // namespace pto::jit::testing
