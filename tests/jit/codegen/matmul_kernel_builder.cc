#include "matmul_kernel_builder.h"

#include <cmath>
#include <vector>

#include "device/aligned_buffer.h"
#include "gtest/gtest.h"
#include "kernel_test_util.h"

namespace pto::jit::testing {

using ir::ExprOp;
using ir::SymExpr;

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

// C[b,m,n] = epilogue(sum_k A[b,m,k] B[b,k,n]); domain [s0, s1, s2] (batch, M, N), K = s3.
// A is [b][m][k] (or [b][k][m] when transposed), B per `b_layout`.
// With `epilogue`: out = gelu_tanh(acc + bias[n]) + residual[b,m,n].
ir::Kernel MatMulKernel(const MatMulOptions& o, const std::string& name) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kMatMul;
  k.name = name;
  k.num_buffers = 5;
  const SymExpr B = SymExpr::Symbol(0);
  const SymExpr K = o.static_k.has_value() ? SymExpr(*o.static_k) : SymExpr::Symbol(3);
  const SymExpr N = o.static_n.has_value() ? SymExpr(*o.static_n) : SymExpr::Symbol(2);
  const SymExpr M = o.static_m.has_value() ? SymExpr(*o.static_m) : SymExpr::Symbol(1);
  k.domain = {B, M, N};
  k.k = K;
  if (o.config.has_value()) {
    k.config = *o.config;
  } else {
    k.config.mr = o.mr;
    k.config.nr_vectors = o.nrv;
    k.config.vector_width = o.vw;
  }
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
  if (o.epilogue && o.light_epilogue) {
    v = p.Bin(ExprOp::kAdd, p.Bin(ExprOp::kAdd, p.Bin(ExprOp::kMul, v, p.Const(0.5f)), p.Load(3)),
              p.Load(4));
  } else if (o.epilogue) {
    v = p.Bin(ExprOp::kAdd, p.Un(ExprOp::kGeluTanh, p.Bin(ExprOp::kAdd, v, p.Load(3))), p.Load(4));
  }
  k.output = p.nodes();
  k.stores = {{2, v}};
  if (o.prepacked_block > 0) {
    k.b_packed = k.num_buffers++;
    k.b_packed_block = o.prepacked_block;
  }
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

namespace {

constexpr float kSentinel = 12345.f;

double GeluTanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

}  // namespace

void CheckMatMul(pto_kernel_fn fn, const MatMulCase& c, bool epilogue, int64_t tile0, int64_t tile1,
                 const std::string& what, int64_t scratch_bytes) {
  const int64_t bn = c.batch, m = c.m, n = c.n, kk = c.k;
  std::vector<float> a = RandomVector(bn * m * kk + 1, 31),
                     b = RandomVector(bn * BSize(c.b_layout, n, kk) + 1, 32);
  std::vector<float> bias = RandomVector(n + 1, 33), res = RandomVector(bn * m * n + 1, 34);
  std::vector<float> out(bn * m * n + 1, kSentinel);
  // ir::PackedB: the full column blocks, (k, n) at ((n / block) * K + k) * block + n % block,
  // aligned as the plan's copy is (the kernel reads it with aligned vector loads).
  const int64_t block = c.prepacked_block;
  const int64_t packed_cols = block > 0 ? n / block * block : 0;
  device::AlignedBuffer packed_buffer(static_cast<size_t>(packed_cols * kk + 1) * sizeof(float));
  float* packed = static_cast<float*>(packed_buffer.data());
  for (int64_t j = 0; j < packed_cols; ++j) {
    for (int64_t l = 0; l < kk; ++l) {
      packed[((j / block) * kk + l) * block + j % block] = b[BIndex(c, 0, l, j)];
    }
  }
  RunGrid(fn, {a.data(), b.data(), out.data(), bias.data(), res.data(), packed}, {bn, m, n, kk},
          bn * m, n, tile0, tile1, scratch_bytes);
  for (int64_t x = 0; x < bn; ++x) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t l = 0; l < kk; ++l) {
          const float av = c.transpose_a ? a[x * m * kk + l * m + i] : a[x * m * kk + i * kk + l];
          const float bv = b[BIndex(c, x, l, j)];
          acc += static_cast<double>(av) * bv;
        }
        if (epilogue && c.light_epilogue) {
          acc = acc * 0.5 + bias[j] + res[x * m * n + i * n + j];
        } else if (epilogue) {
          acc = GeluTanh(acc + bias[j]) + res[x * m * n + i * n + j];
        }
        ASSERT_NEAR(out[x * m * n + i * n + j], acc, 1e-5 * (4 + kk))
            << what << " at " << x << "," << i << "," << j << " of " << bn << "x" << m << "x" << n
            << " k " << kk;
      }
    }
  }
  ASSERT_EQ(out[bn * m * n], kSentinel);
}

}  // namespace pto::jit::testing
