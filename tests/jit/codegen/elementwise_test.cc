#include <algorithm>
#include <cmath>
#include <regex>
#include <vector>

#include "device/aligned_buffer.h"
#include "gtest/gtest.h"
#include "kernel_builders.h"
#include "kernel_test_util.h"

namespace pto::jit::testing {
namespace {

using device::Isa;
using ir::ExprOp;
using ir::SymExpr;

constexpr float kSentinel = 12345.f;

void CheckBroadcast(pto_kernel_fn fn, int64_t rows, int64_t cols, std::vector<int64_t> symbols,
                    int64_t tile0, int64_t tile1) {
  std::vector<float> x = RandomVector(rows * cols, 1), y = RandomVector(rows, 2),
                     b = RandomVector(cols, 3), out(rows * cols + 1, kSentinel);
  RunGrid(fn, {x.data(), y.data(), b.data(), out.data()}, symbols, rows, cols, tile0, tile1);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      ASSERT_FLOAT_EQ(out[i * cols + j], x[i * cols + j] * y[i] + b[j])
          << "at " << i << "," << j << " of " << rows << "x" << cols;
    }
  }
  EXPECT_EQ(out[rows * cols], kSentinel);  // nothing written past the end
}

TEST(ElementwiseTest, BroadcastStaticShapesAndTiles) {
  for (int64_t rows : {1, 3, 17}) {
    for (int64_t cols : {1, 3, 17, 33, 100}) {
      ir::Kernel k = BroadcastKernel(
          rows, cols, "ew_bcast_" + std::to_string(rows) + "x" + std::to_string(cols));
      absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx512), k);
      ASSERT_TRUE(c.ok()) << c.status();
      CheckBroadcast(c->entry, rows, cols, {}, 0, 0);
      CheckBroadcast(c->entry, rows, cols, {}, 2, 7);
    }
  }
}

TEST(ElementwiseTest, SymbolicDimsFromArgs) {
  ir::Kernel k = BroadcastKernel(SymExpr::Symbol(0), SymExpr::Symbol(1), "ew_bcast_sym");
  k.config.unroll = 3;
  absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx512), k);
  ASSERT_TRUE(c.ok()) << c.status();
  for (int64_t rows : {1, 3, 17}) {
    for (int64_t cols : {1, 3, 17, 33, 100}) {
      CheckBroadcast(c->entry, rows, cols, {rows, cols}, 0, 0);
      CheckBroadcast(c->entry, rows, cols, {rows, cols}, 5, 9);
    }
  }
}

// A row's last elements (fewer than a vector) are one masked vector, not scalar code: AVX-512
// masks with a k register, AVX2 uses vmaskmovps; no scalar multiply or FMA is left (the tests
// above check the results and that nothing past the output is written).
TEST(ElementwiseTest, RowTailIsOneMaskedVector) {
  ir::Kernel k = BroadcastKernel(SymExpr::Symbol(0), SymExpr::Symbol(1), "ew_tail");
  const std::regex scalar("v(fmadd[0-9]+|mul|add)ss");
  const std::string avx2 = KernelAssembly(k, TargetFor(Isa::kAvx2));
  EXPECT_NE(avx2.find("vmaskmovps"), std::string::npos);
  EXPECT_FALSE(std::regex_search(avx2, scalar));
  if (HostTarget().isa == Isa::kAvx512) {
    const std::string avx512 = KernelAssembly(k, TargetFor(Isa::kAvx512));
    EXPECT_TRUE(std::regex_search(avx512, std::regex("vmovups[^\\n]*\\{%k[1-7]\\}")));
    EXPECT_FALSE(std::regex_search(avx512, scalar));
  }
}

TEST(ElementwiseTest, ZeroExtentsWriteNothing) {
  ir::Kernel k = BroadcastKernel(SymExpr::Symbol(0), SymExpr::Symbol(1), "ew_bcast_zero");
  absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx512), k);
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<float> in(64, 1.f), out(64, kSentinel);
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{0, 5}, {5, 0}, {0, 0}}) {
    RunGrid(c->entry, {in.data(), in.data(), in.data(), out.data()}, {rows, cols}, rows, cols);
    RunRange(c->entry, {in.data(), in.data(), in.data(), out.data()}, {4, 4}, 2, 3, 2, 3);
    for (float v : out) ASSERT_EQ(v, kSentinel);
  }
}

TEST(ElementwiseTest, TransposedStridedRank3AndScatter) {
  // out[a,b,c] (stored with a stride-2 innermost, offset 1) = x[c,b,a] (transposed) - 1
  const int64_t A = 3, B = 5, C = 17;
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = "ew_transpose_rank3";
  k.num_buffers = 2;
  k.domain = {A, B, C};
  k.accesses = {MakeAccess(0, {1, A, A * B}), MakeAccess(1, {B * C * 2, C * 2, 2}, 1)};
  Program p;
  int v = p.Bin(ExprOp::kSub, p.Load(0), p.Const(1.f));
  k.output = p.nodes();
  k.stores = {{1, v}};
  for (Isa isa : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
    absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
    ASSERT_TRUE(c.ok()) << c.status();
    std::vector<float> x = RandomVector(A * B * C, 4), out(A * B * C * 2 + 1, kSentinel);
    RunGrid(c->entry, {x.data(), out.data()}, {}, A * B, C, 4, 5);
    for (int64_t a = 0; a < A; ++a) {
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t cc = 0; cc < C; ++cc) {
          const int64_t o = 1 + a * B * C * 2 + b * C * 2 + cc * 2;
          ASSERT_EQ(out[o], x[a + b * A + cc * A * B] - 1.f);
          ASSERT_EQ(out[o - 1], kSentinel);
        }
      }
    }
  }
}

// A copy transposing its last two dims (ir::TransposingCopyOf), either way round, over a
// rank-3 domain whose inner row runs (21) end inside blocks of vector-width rows, columns (19)
// that are no multiple of the vector, and tiles that cut blocks: every element lands where it
// belongs and nothing else is written.
TEST(ElementwiseTest, TransposingCopiesEitherWayRound) {
  const int64_t A = 3, R = 21, C = 19;
  for (ir::TransposingCopy kind :
       {ir::TransposingCopy::kStoresAcross, ir::TransposingCopy::kLoadsAcross}) {
    const bool stores_across = kind == ir::TransposingCopy::kStoresAcross;
    ir::Kernel k;
    k.kind = ir::KernelKind::kElementwise;
    k.name = stores_across ? "ew_tcopy_stores_across" : "ew_tcopy_loads_across";
    k.num_buffers = 2;
    k.domain = {A, R, C};
    // out[a, c, r] = x[a, r, c] (domain order = x's) or out[a, r, c] = x[a, c, r].
    using S = std::vector<SymExpr>;
    k.accesses = {MakeAccess(0, stores_across ? S{R * C, C, 1} : S{R * C, 1, R}),
                  MakeAccess(1, stores_across ? S{R * C, 1, R} : S{R * C, C, 1})};
    Program p;
    const int v = p.Load(0);
    k.output = p.nodes();
    k.stores = {{1, v}};
    ASSERT_EQ(ir::TransposingCopyOf(k), kind);
    for (Isa isa : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
      absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
      ASSERT_TRUE(c.ok()) << c.status();
      for (auto [tile0, tile1] : {std::pair<int64_t, int64_t>{64, 128}, {13, 7}, {1, 0}}) {
        std::vector<float> x = RandomVector(A * R * C, 7), out(A * R * C + 1, kSentinel);
        RunGrid(c->entry, {x.data(), out.data()}, {}, A * R, C, tile0, tile1);
        for (int64_t a = 0; a < A; ++a) {
          for (int64_t r = 0; r < R; ++r) {
            for (int64_t cc = 0; cc < C; ++cc) {
              const int64_t in = stores_across ? a * R * C + r * C + cc : a * R * C + cc * R + r;
              const int64_t at = stores_across ? a * R * C + cc * R + r : a * R * C + r * C + cc;
              ASSERT_EQ(out[at], x[in]) << k.name << " at " << a << "," << r << "," << cc
                                        << " tiles " << tile0 << "x" << tile1;
            }
          }
        }
        EXPECT_EQ(out[A * R * C], kSentinel);
      }
    }
  }
}

// The blocks go through registers: whole-vector loads and stores and interleaves, on AVX2 and
// on AVX-512 (compiled, not run, when the host lacks it).
TEST(ElementwiseTest, TransposingCopyAssemblyInterleavesVectors) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = "ew_tcopy_asm";
  k.num_buffers = 2;
  k.domain = {SymExpr::Symbol(0), SymExpr::Symbol(1)};
  k.accesses = {MakeAccess(0, {SymExpr::Symbol(1), SymExpr(1)}),
                MakeAccess(1, {SymExpr(1), SymExpr::Symbol(0)})};
  Program p;
  const int v = p.Load(0);
  k.output = p.nodes();
  k.stores = {{1, v}};
  const std::string avx2 = KernelAssembly(k, TargetFor(Isa::kAvx2));
  EXPECT_NE(avx2.find("vunpcklps"), std::string::npos) << avx2;
  EXPECT_TRUE(std::regex_search(avx2, std::regex(R"(vmovups\s+%ymm[0-9]+, -?[0-9]*\()"))) << avx2;
  const std::string avx512 = KernelAssembly(k, CompileOnlyTargetFor(Isa::kAvx512));
  EXPECT_TRUE(std::regex_search(avx512, std::regex(R"(vmovups\s+%zmm[0-9]+, -?[0-9]*\()")))
      << avx512;
  EXPECT_TRUE(std::regex_search(avx512, std::regex(R"((vunpck|vperm|vshuf)[a-z0-9]*\s[^\n]*%zmm)")))
      << avx512;
}

TEST(ElementwiseTest, RankZeroDomain) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = "ew_rank0";
  k.num_buffers = 2;
  k.accesses = {MakeAccess(0, {}, 2), MakeAccess(1, {})};
  Program p;
  k.output = p.nodes();
  int v = p.Bin(ExprOp::kMul, p.Load(0), p.Const(3.f));
  k.output = p.nodes();
  k.stores = {{1, v}};
  absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx512), k);
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<float> x = {1, 2, 5}, out = {0, kSentinel};
  RunGrid(c->entry, {x.data(), out.data()}, {}, 1, 1);
  EXPECT_EQ(out[0], 15.f);
  EXPECT_EQ(out[1], kSentinel);

  // A config the tuner may try (streaming stores, prefetched inputs) changes nothing at rank 0:
  // its accesses have no strides to stream along.
  k.name = "ew_rank0_streaming";
  k.config.streaming_stores = true;
  k.config.prefetch_inputs = 4096;
  c = CompileKernel(EngineFor(Isa::kAvx512), k);
  ASSERT_TRUE(c.ok()) << c.status();
  out = {0, kSentinel};
  RunGrid(c->entry, {x.data(), out.data()}, {}, 1, 1);
  EXPECT_EQ(out[0], 15.f);
  EXPECT_EQ(out[1], kSentinel);
}

double Reference(ExprOp op, double x, double y) {
  switch (op) {
    case ExprOp::kAdd:
      return x + y;
    case ExprOp::kSub:
      return x - y;
    case ExprOp::kMul:
      return x * y;
    case ExprOp::kDiv:
      return x / y;
    case ExprOp::kMax:
      return std::max(x, y);
    case ExprOp::kMin:
      return std::min(x, y);
    case ExprOp::kNeg:
      return -x;
    case ExprOp::kAbs:
      return std::abs(x);
    case ExprOp::kExp:
      return std::exp(x);
    case ExprOp::kLog:
      return std::log(y);
    case ExprOp::kSqrt:
      return std::sqrt(y);
    case ExprOp::kRsqrt:
      return 1 / std::sqrt(y);
    case ExprOp::kTanh:
      return std::tanh(x);
    case ExprOp::kSigmoid:
      return 1 / (1 + std::exp(-x));
    case ExprOp::kRelu:
      return x < 0 ? 0 : x;
    case ExprOp::kGeluTanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    case ExprOp::kGeluErf:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case ExprOp::kSilu:
      return x / (1 + std::exp(-x));
    default:
      return NAN;
  }
}

TEST(ElementwiseTest, EveryExprOpOnEveryIsa) {
  // One kernel with a store per op: x in [-3, 3], y in [0.1, 4] (domain of log/sqrt/rsqrt).
  const std::vector<ExprOp> ops = {
      ExprOp::kAdd,      ExprOp::kSub,     ExprOp::kMul,  ExprOp::kDiv,     ExprOp::kMax,
      ExprOp::kMin,      ExprOp::kNeg,     ExprOp::kAbs,  ExprOp::kExp,     ExprOp::kLog,
      ExprOp::kSqrt,     ExprOp::kRsqrt,   ExprOp::kTanh, ExprOp::kSigmoid, ExprOp::kRelu,
      ExprOp::kGeluTanh, ExprOp::kGeluErf, ExprOp::kSilu};
  const int64_t n = 100;
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = "ew_all_ops";
  k.num_buffers = 2 + static_cast<int>(ops.size());
  k.domain = {n};
  k.accesses = {MakeAccess(0, {1}), MakeAccess(1, {1})};
  Program p;
  const int x = p.Load(0), y = p.Load(1);
  for (size_t i = 0; i < ops.size(); ++i) {
    const ExprOp op = ops[i];
    const bool uses_y = op == ExprOp::kLog || op == ExprOp::kSqrt || op == ExprOp::kRsqrt;
    const int v = ir::IsBinary(op) ? p.Bin(op, x, y) : p.Un(op, uses_y ? y : x);
    k.accesses.push_back(MakeAccess(2 + static_cast<int>(i), {1}));
    k.stores.push_back({2 + static_cast<int>(i), v});
  }
  k.output = p.nodes();
  std::vector<float> xs = RandomVector(n, 7, -3.f, 3.f), ys = RandomVector(n, 8, 0.1f, 4.f);
  for (Isa isa : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
    absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
    ASSERT_TRUE(c.ok()) << c.status();
    std::vector<std::vector<float>> outs(ops.size(), std::vector<float>(n, kSentinel));
    std::vector<float*> bufs = {xs.data(), ys.data()};
    for (auto& o : outs) bufs.push_back(o.data());
    RunGrid(c->entry, bufs, {}, 1, n, 1, 33);
    for (size_t i = 0; i < ops.size(); ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const double want = Reference(ops[i], xs[j], ys[j]);
        ASSERT_NEAR(outs[i][j], want, 2e-6 * std::max(1.0, std::abs(want)))
            << ir::ExprOpName(ops[i]) << " x=" << xs[j] << " y=" << ys[j] << " isa "
            << device::IsaName(isa);
      }
    }
  }
}

TEST(ElementwiseTest, ConfigVectorWidthAndUnroll) {
  for (int vw : {1, 4, 8, 16}) {
    for (int unroll : {1, 2, 4}) {
      ir::Kernel k = BroadcastKernel(SymExpr::Symbol(0), SymExpr::Symbol(1),
                                     "ew_cfg_" + std::to_string(vw) + "_" + std::to_string(unroll));
      k.config.vector_width = vw;
      k.config.unroll = unroll;
      absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx512), k);
      ASSERT_TRUE(c.ok()) << c.status();
      for (int64_t cols : {1, 17, 100}) CheckBroadcast(c->entry, 3, cols, {3, cols}, 0, 0);
    }
  }
}

TEST(ElementwiseTest, InvalidKernelsAreRefused) {
  ir::Kernel k = BroadcastKernel(4, 4, "ew_bad");
  k.accesses[1].buffer = 9;
  absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx512), k);
  ASSERT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("buffer 9"), std::string::npos) << c.status();

  k = BroadcastKernel(4, 4, "ew_bad_strides");
  k.accesses[0].strides.pop_back();
  c = CompileKernel(EngineFor(Isa::kAvx512), k);
  ASSERT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(c.status().message().find("expected 2"), std::string::npos) << c.status();

  k = BroadcastKernel(4, 4, "ew_bad_acc");
  k.output[0].op = ExprOp::kAcc;
  c = CompileKernel(EngineFor(Isa::kAvx512), k);
  ASSERT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);

  k = BroadcastKernel(4, 4, "ew_f16");
  k.accesses[0].dtype = ir::DType::kF16;
  c = CompileKernel(EngineFor(Isa::kAvx512), k);
  ASSERT_EQ(c.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(c.status().message().find("f16"), std::string::npos) << c.status();
}

// max/min as in the ops/ reference (numpy): NaN if either operand is NaN, else a > b ? a : b
// (a < b ? a : b), bit for bit (so max(-0, +0) = +0 and max(+0, -0) = -0).
float ReferenceMaxMin(ExprOp op, float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (op == ExprOp::kMax) return a > b ? a : b;
  return a < b ? a : b;
}

TEST(ElementwiseTest, MaxMinPropagateNaN) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = "ew_maxmin_nan";
  k.num_buffers = 4;
  const SymExpr rows = SymExpr::Symbol(0), cols = SymExpr::Symbol(1);
  k.domain = {rows, cols};
  for (int i = 0; i < 4; ++i) k.accesses.push_back(MakeAccess(i, {cols, 1}));
  Program p;
  const int x = p.Load(0), y = p.Load(1);
  const int mx = p.Bin(ExprOp::kMax, x, y), mn = p.Bin(ExprOp::kMin, x, y);
  k.output = p.nodes();
  k.stores = {{2, mx}, {3, mn}};
  // Every pair of these values, placed so that each pair lands in vector lanes and in the
  // scalar tail: x runs over the values fastest, y slowest.
  const std::vector<float> values = {NAN, -NAN, 1.f, -1.f, 0.f, -0.f, INFINITY, -INFINITY, 3.5f};
  const int64_t nv = static_cast<int64_t>(values.size());
  for (Isa isa : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
    absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
    ASSERT_TRUE(c.ok()) << c.status();
    for (int64_t width : {1, 3, 17, 33}) {
      const int64_t n = nv * nv * 3;
      const int64_t r = (n + width - 1) / width;
      std::vector<float> xs(r * width, 2.f), ys(r * width, 2.f);
      for (int64_t i = 0; i < n; ++i) {
        xs[i] = values[i % nv];
        ys[i] = values[(i / nv) % nv];
      }
      std::vector<float> omax(r * width, kSentinel), omin(r * width, kSentinel);
      RunGrid(c->entry, {xs.data(), ys.data(), omax.data(), omin.data()}, {r, width}, r, width);
      for (int64_t i = 0; i < r * width; ++i) {
        for (auto [op, out] : {std::pair{ExprOp::kMax, &omax}, std::pair{ExprOp::kMin, &omin}}) {
          const float want = ReferenceMaxMin(op, xs[i], ys[i]), got = (*out)[i];
          if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(got)) << ir::ExprOpName(op) << "(" << xs[i] << ", " << ys[i]
                                         << ") = " << got << " isa " << device::IsaName(isa);
          } else {
            ASSERT_EQ(got, want) << ir::ExprOpName(op) << "(" << xs[i] << ", " << ys[i] << ")";
            ASSERT_EQ(std::signbit(got), std::signbit(want))
                << ir::ExprOpName(op) << "(" << xs[i] << ", " << ys[i] << ")";
          }
        }
      }
    }
  }
}

// NaN-propagating max is a select on fcmps: on AVX2 cmpltps + cmpunordps + orps + one blendvps
// (llvm.maximum would need three blends), no libm call.
TEST(ElementwiseTest, MaxAssemblyIsCompareAndBlend) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = "ew_max_asm";
  k.num_buffers = 3;
  k.domain = {SymExpr::Symbol(0)};
  for (int i = 0; i < 3; ++i) k.accesses.push_back(MakeAccess(i, {1}));
  Program p;
  const int v = p.Bin(ExprOp::kMax, p.Load(0), p.Load(1));
  k.output = p.nodes();
  k.stores = {{2, v}};
  const std::string avx2 = KernelAssembly(k, TargetFor(Isa::kAvx2));
  EXPECT_NE(avx2.find("vcmpunordps"), std::string::npos) << avx2;
  EXPECT_NE(avx2.find("vblendvps"), std::string::npos) << avx2;
  EXPECT_EQ(avx2.find("call"), std::string::npos) << avx2;
  const std::string sse2 = KernelAssembly(k, TargetFor(Isa::kSse2));
  EXPECT_NE(sse2.find("cmpunordps"), std::string::npos) << sse2;
  EXPECT_EQ(sse2.find("call"), std::string::npos) << sse2;
}

// Streaming stores: non-temporal vector stores after a scalar peel to the vector's alignment,
// whatever the output's alignment (every offset within a vector), extent and tile split; the
// kernel ends with sfence. Without the field, none.
TEST(ElementwiseTest, StreamingStoresAtEveryAlignment) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    ir::Kernel k = BroadcastKernel(SymExpr::Symbol(0), SymExpr::Symbol(1),
                                   std::string("ew_stream_") + device::IsaName(isa));
    k.config.streaming_stores = true;
    const std::string assembly = KernelAssembly(k, TargetFor(isa));
    EXPECT_NE(assembly.find("vmovntps"), std::string::npos) << device::IsaName(isa);
    EXPECT_NE(assembly.find("sfence"), std::string::npos) << device::IsaName(isa);
    ir::Kernel plain = k;
    plain.config.streaming_stores = false;
    plain.name += "_plain";
    EXPECT_EQ(KernelAssembly(plain, TargetFor(isa)).find("vmovntps"), std::string::npos);
    absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
    ASSERT_TRUE(c.ok()) << c.status();
    const int64_t lanes = TargetFor(isa).f32_lanes();
    for (int64_t offset = 0; offset < lanes; ++offset) {
      for (int64_t cols : {1, 3, 16, 17, 33, 100, 257}) {
        for (auto [tile0, tile1] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {2, 40}}) {
          const int64_t rows = 3, n = rows * cols;
          std::vector<float> x = RandomVector(n, 1), y = RandomVector(rows, 2),
                             b = RandomVector(cols, 3);
          // 64-byte aligned storage, the output starting `offset` floats in.
          const int64_t size = n + 2 * lanes;
          device::AlignedBuffer buffer(static_cast<size_t>(size) * sizeof(float));
          float* storage = static_cast<float*>(buffer.data());
          std::fill(storage, storage + size, kSentinel);
          float* out = storage + offset;
          RunGrid(c->entry, {x.data(), y.data(), b.data(), out}, {rows, cols}, rows, cols, tile0,
                  tile1);
          for (int64_t i = 0; i < rows; ++i) {
            for (int64_t j = 0; j < cols; ++j) {
              ASSERT_FLOAT_EQ(out[i * cols + j], x[i * cols + j] * y[i] + b[j])
                  << device::IsaName(isa) << " offset " << offset << " at " << i << "," << j
                  << " of " << rows << "x" << cols << " tiles " << tile0 << "x" << tile1;
            }
          }
          for (int64_t i = 0; i < offset; ++i) ASSERT_EQ(storage[i], kSentinel);
          for (int64_t i = offset + n; i < size; ++i) {
            ASSERT_EQ(storage[i], kSentinel) << "written past the end at " << i - offset - n;
          }
        }
      }
    }
  }
}

// prefetch_inputs: every vector of x (a stream along the rows) prefetches its line that far
// ahead into the L2 (prefetcht1); y (stride 0 along the row) and b (the same for every row) are
// in cache already and are not prefetched, so a second streamed input doubles the prefetches.
// Results are the same with and without, on every tile split.
TEST(ElementwiseTest, PrefetchInputsOnlyTheStreamedOnes) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    SCOPED_TRACE(device::IsaName(isa));
    ir::Kernel k = BroadcastKernel(SymExpr::Symbol(0), SymExpr::Symbol(1),
                                   std::string("ew_prefetch_") + device::IsaName(isa));
    ir::Kernel none = k;
    none.name += "_none";
    k.config.prefetch_inputs = 4096;
    ir::Kernel two = k;
    two.name += "_two";
    two.accesses[2].strides = {SymExpr::Symbol(1), 1};  // b a whole matrix too
    // Counted in the emitted IR (i32 2: locality L2): how often the optimizer unrolls the loops
    // that hold them depends on the CPU model, so the assembly's count does not double exactly.
    const std::string l2_prefetch = "i32 0, i32 2, i32 1)";
    const size_t one_stream = CountOf(KernelIr(k, TargetFor(isa)), l2_prefetch);
    EXPECT_GT(one_stream, 0u);
    EXPECT_EQ(CountOf(KernelIr(two, TargetFor(isa)), l2_prefetch), 2 * one_stream);
    EXPECT_EQ(CountOf(KernelIr(none, TargetFor(isa)), l2_prefetch), 0u);
    EXPECT_GT(CountOf(KernelAssembly(k, TargetFor(isa)), "prefetcht1"), 0u);
    EXPECT_GT(CountOf(KernelAssembly(two, TargetFor(isa)), "prefetcht1"), 0u);
    EXPECT_EQ(CountOf(KernelAssembly(none, TargetFor(isa)), "prefetcht"), 0u);
    absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
    ASSERT_TRUE(c.ok()) << c.status();
    for (int64_t rows : {1, 5}) {
      for (int64_t cols : {3, 17, 100, 257}) {
        CheckBroadcast(c->entry, rows, cols, {rows, cols}, 0, 0);
        CheckBroadcast(c->entry, rows, cols, {rows, cols}, 2, 48);
      }
    }
  }
}

TEST(ElementwiseTest, PrefetchDistanceOutOfRangeIsInvalid) {
  for (int64_t bytes : {int64_t{-1}, ir::TileConfig::kMaxPrefetchBytes + 1}) {
    ir::Kernel k = BroadcastKernel(4, 4, "ew_bad_prefetch");
    k.config.prefetch_inputs = bytes;
    absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx512), k);
    ASSERT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(c.status().message().find("config.prefetch_inputs " + std::to_string(bytes) +
                                        " not in [0, 1048576]"),
              std::string::npos)
        << c.status();
  }
}

}  // namespace
}  // namespace pto::jit::testing
