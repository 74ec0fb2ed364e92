#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "device/aligned_buffer.h"
#include "gtest/gtest.h"
#include "jit/codegen/emit_kernel.h"
#include "kernel_builders.h"
#include "kernel_test_util.h"

namespace pto::jit::testing {
namespace {

using device::Isa;
using ir::ExprOp;
using ir::SymExpr;

constexpr float kSentinel = 12345.f;

std::vector<double> ReferenceRow(ir::RowOpKind op, const std::vector<double>& x, double eps) {
  const size_t n = x.size();
  std::vector<double> y(n);
  if (n == 0) return y;
  if (op == ir::RowOpKind::kSoftmax || op == ir::RowOpKind::kLogSoftmax) {
    double m = -INFINITY, s = 0;
    for (double v : x) m = std::max(m, v);
    for (double v : x) s += std::exp(v - m);
    for (size_t i = 0; i < n; ++i) {
      y[i] = op == ir::RowOpKind::kSoftmax ? std::exp(x[i] - m) / s : x[i] - m - std::log(s);
    }
  } else if (op == ir::RowOpKind::kLayerNorm) {
    double mean = 0, var = 0;
    for (double v : x) mean += v;
    mean /= n;
    for (double v : x) var += (v - mean) * (v - mean);
    var /= n;
    for (size_t i = 0; i < n; ++i) y[i] = (x[i] - mean) / std::sqrt(var + eps);
  } else {
    double ms = 0;
    for (double v : x) ms += v * v;
    ms /= n;
    for (size_t i = 0; i < n; ++i) y[i] = x[i] / std::sqrt(ms + eps);
  }
  return y;
}

// The row length made the static `cols` (domain and the row strides of x and out).
void MakeRowLengthStatic(ir::Kernel& k, int64_t cols) {
  k.domain[2] = cols;
  k.accesses[0] = MakeAccess(0, {k.domain[1] * cols, cols, 1});
  k.accesses[3] = MakeAccess(3, {k.domain[1] * cols, cols, 1});
}

// Every row of `out` against the double reference of RowKernel's program on `x`: NaN
// throughout where nan_row(r), else within 2e-5 relative.
void ExpectRowsMatchReference(ir::RowOpKind op, const std::vector<float>& x,
                              const std::vector<float>& w, const std::vector<float>& b,
                              const float* out, int64_t rows, int64_t cols,
                              const std::function<bool(int64_t)>& nan_row,
                              const std::string& what) {
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> row(cols);
    for (int64_t j = 0; j < cols; ++j) row[j] = 1.5 * x[r * cols + j];
    std::vector<double> y = ReferenceRow(op, row, 1e-5);
    for (int64_t j = 0; j < cols; ++j) {
      const float got = out[r * cols + j];
      if (nan_row(r)) {
        ASSERT_TRUE(std::isnan(got))
            << what << " row " << r << " col " << j << " of " << cols << " got " << got;
      } else {
        const double want = y[j] * w[j] + b[j];
        ASSERT_NEAR(got, want, 2e-5 * std::max(1.0, std::abs(want)))
            << what << " row " << r << " col " << j << " of " << cols;
      }
    }
  }
}

void CheckRowOp(pto_kernel_fn fn, ir::RowOpKind op, int64_t a, int64_t rows, int64_t cols,
                float offset, float spread, int64_t tile, double tol, const std::string& what) {
  const int64_t n = a * rows * cols;
  std::vector<float> x = RandomVector(n, 21, offset - spread, offset + spread);
  std::vector<float> w = RandomVector(cols, 22, 0.5f, 1.5f), b = RandomVector(cols, 23);
  std::vector<float> out(n + 1, kSentinel);
  RunGrid(fn, {x.data(), w.data(), b.data(), out.data()}, {a, rows, cols}, a * rows, 1, tile, 0);
  for (int64_t r = 0; r < a * rows; ++r) {
    std::vector<double> row(cols);
    for (int64_t c = 0; c < cols; ++c) row[c] = 1.5 * x[r * cols + c];
    std::vector<double> y = ReferenceRow(op, row, 1e-5);
    for (int64_t c = 0; c < cols; ++c) {
      const double want = y[c] * w[c] + b[c];
      ASSERT_NEAR(out[r * cols + c], want, tol * std::max(1.0, std::abs(want)))
          << what << " row " << r << " col " << c << " of " << cols;
    }
  }
  ASSERT_EQ(out[n], kSentinel);
}

TEST(RowOpTest, AllOpsAllWidths) {
  const std::pair<ir::RowOpKind, const char*> ops[] = {{ir::RowOpKind::kSoftmax, "softmax"},
                                                       {ir::RowOpKind::kLogSoftmax, "logsm"},
                                                       {ir::RowOpKind::kLayerNorm, "ln"},
                                                       {ir::RowOpKind::kRmsNorm, "rms"}};
  for (auto [op, name] : ops) {
    for (Isa isa : {Isa::kSse2, Isa::kAvx512}) {
      for (int unroll : {1, 4}) {
        ir::Kernel k =
            RowKernel(op, unroll, std::string("row_") + name + "_u" + std::to_string(unroll));
        absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
        ASSERT_TRUE(c.ok()) << c.status();
        for (int64_t cols : {1, 3, 17, 33, 100}) {
          CheckRowOp(c->entry, op, 2, 3, cols, 0.f, 3.f, 0, 2e-5, name);
          CheckRowOp(c->entry, op, 1, 5, cols, 0.f, 3.f, 2, 2e-5, name);
        }
      }
    }
  }
}

TEST(RowOpTest, LayerNormLargeMeanAndConstantRows) {
  ir::Kernel k = RowKernel(ir::RowOpKind::kLayerNorm, 2, "row_ln_large_mean");
  absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx512), k);
  ASSERT_TRUE(c.ok()) << c.status();
  // Mean 1e4, spread 1: a one-pass E[x^2]-E[x]^2 in f32 would lose everything here.
  CheckRowOp(c->entry, ir::RowOpKind::kLayerNorm, 1, 4, 100, 1e4f, 1.f, 0, 2e-2, "large mean");
  // Constant rows: variance 0, so y = 0 * rsqrt(eps) = 0 and out = b.
  std::vector<float> x(3 * 17, 7.f), w(17, 2.f), b = RandomVector(17, 5), out(3 * 17, 0);
  RunGrid(c->entry, {x.data(), w.data(), b.data(), out.data()}, {1, 3, 17}, 3, 1);
  for (int64_t i = 0; i < 3 * 17; ++i) ASSERT_NEAR(out[i], b[i % 17], 1e-6);
}

TEST(RowOpTest, SoftmaxExtremeValuesAndEmptyRows) {
  ir::Kernel k = RowKernel(ir::RowOpKind::kSoftmax, 2, "row_softmax_extreme");
  absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx512), k);
  ASSERT_TRUE(c.ok()) << c.status();
  // Values near +-80 (1.5x = 120): exp would overflow without subtracting the max.
  CheckRowOp(c->entry, ir::RowOpKind::kSoftmax, 1, 3, 33, 0.f, 80.f, 0, 2e-5, "extreme");
  std::vector<float> in(8, 1.f), out(8, kSentinel);
  RunGrid(c->entry, {in.data(), in.data(), in.data(), out.data()}, {1, 3, 0}, 3, 1);
  RunGrid(c->entry, {in.data(), in.data(), in.data(), out.data()}, {0, 3, 4}, 0, 1);
  RunRange(c->entry, {in.data(), in.data(), in.data(), out.data()}, {1, 2, 4}, 0, 0, 2, 0);
  for (float v : out) ASSERT_EQ(v, kSentinel);
}

// The softmax row max propagates NaN: a row with a NaN anywhere (first element, a middle vector
// lane, the scalar tail) is NaN throughout, as in the ops/ reference; other rows are unaffected.
TEST(RowOpTest, SoftmaxRowsWithNaN) {
  for (auto [op, name] : {std::pair{ir::RowOpKind::kSoftmax, "softmax"},
                          std::pair{ir::RowOpKind::kLogSoftmax, "logsm"}}) {
    for (Isa isa : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
      for (int unroll : {1, 3}) {
        ir::Kernel k =
            RowKernel(op, unroll, std::string("row_nan_") + name + "_u" + std::to_string(unroll));
        absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
        ASSERT_TRUE(c.ok()) << c.status();
        for (int64_t cols : {1, 3, 8, 17, 33, 100}) {
          const int64_t rows = 6, n = rows * cols;
          std::vector<float> x = RandomVector(n, 24, -3.f, 3.f);
          std::vector<float> w = RandomVector(cols, 25, 0.5f, 1.5f), b = RandomVector(cols, 26);
          // Row r: no NaN (r = 0, 5), NaN at column 0, cols/2, cols-1, 3*cols/4.
          const int64_t pos[] = {-1, 0, cols / 2, cols - 1, (cols * 3) / 4, -1};
          for (int64_t r = 0; r < rows; ++r) {
            if (pos[r] >= 0) x[r * cols + pos[r]] = NAN;
          }
          std::vector<float> out(n + 1, kSentinel);
          RunGrid(c->entry, {x.data(), w.data(), b.data(), out.data()}, {1, rows, cols}, rows, 1);
          ExpectRowsMatchReference(
              op, x, w, b, out.data(), rows, cols, [&](int64_t r) { return pos[r] >= 0; },
              absl::StrCat(name, " isa ", device::IsaName(isa)));
          ASSERT_EQ(out[n], kSentinel);
        }
      }
    }
  }
}

// Softmax's row max is maxps, which may drop a NaN (the test above shows a NaN row is NaN
// throughout all the same): no unordered compare is left in the kernel, in registers or not.
TEST(RowOpTest, SoftmaxRowMaxIsPlainMaxps) {
  for (int64_t cols : {int64_t{0}, int64_t{128}}) {
    ir::Kernel k = RowKernel(ir::RowOpKind::kSoftmax, 4, absl::StrCat("row_max_asm_", cols));
    if (cols > 0) MakeRowLengthStatic(k, cols);
    const std::string avx2 = KernelAssembly(k, TargetFor(Isa::kAvx2));
    EXPECT_NE(avx2.find("vmaxps"), std::string::npos) << avx2;
    EXPECT_EQ(avx2.find("vcmpunordps"), std::string::npos) << avx2;
  }
}

// Static rows of up to 16 vectors stay in registers (one load of the row): every op on every
// vector ISA, rows of 1 to 16 vectors, whole or with a masked last vector (1 to lanes - 1 of
// its lanes), one row NaN-poisoned (softmax and log_softmax rows with a NaN are NaN
// throughout); nothing is written past the output. Rows of up to 8 vectors run 2 to 4 at a
// time, then one at a time: 7 rows as one task and as tasks of 3 rows (groups that start at
// an odd row, and a one-row task).
TEST(RowOpTest, ShortStaticRowsInRegisters) {
  const std::pair<ir::RowOpKind, const char*> ops[] = {{ir::RowOpKind::kSoftmax, "softmax"},
                                                       {ir::RowOpKind::kLogSoftmax, "logsm"},
                                                       {ir::RowOpKind::kLayerNorm, "ln"},
                                                       {ir::RowOpKind::kRmsNorm, "rms"}};
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const int64_t lanes = TargetFor(isa).f32_lanes();
    // 5 to 8 vectors: softmax's pipelined rows (the next row's max beside this row's exps).
    for (int64_t cols : {lanes, 3 * lanes, 8 * lanes, 16 * lanes, int64_t{1}, lanes - 1,
                         3 * lanes + 5, 6 * lanes + 3, 12 * lanes + 5, 16 * lanes - 1}) {
      for (auto [op, name] : ops) {
        ir::Kernel k =
            RowKernel(op, 4, absl::StrCat("row_regs_", name, "_", device::IsaName(isa), "_", cols));
        MakeRowLengthStatic(k, cols);
        absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
        ASSERT_TRUE(c.ok()) << c.status();
        const int64_t rows = 7, n = rows * cols;
        std::vector<float> x = RandomVector(n, 41, -3.f, 3.f);
        const bool nan_row = op == ir::RowOpKind::kSoftmax || op == ir::RowOpKind::kLogSoftmax;
        if (nan_row) {
          x[4 * cols + cols / 2] = NAN;
          // Odd rows 100 higher: a neighbour's max would overflow or flush this row's exps.
          for (int64_t r = 1; r < rows; r += 2) {
            for (int64_t j = 0; j < cols; ++j) x[r * cols + j] += 100.f;
          }
        }
        std::vector<float> w = RandomVector(cols, 42, 0.5f, 1.5f), b = RandomVector(cols, 43);
        for (int64_t tile : {0, 3}) {
          std::vector<float> out(n + 1, kSentinel);
          RunGrid(c->entry, {x.data(), w.data(), b.data(), out.data()}, {1, rows, cols}, rows, 1,
                  tile);
          ExpectRowsMatchReference(
              op, x, w, b, out.data(), rows, cols, [&](int64_t r) { return nan_row && r == 4; },
              absl::StrCat(k.name, " tile ", tile));
          ASSERT_EQ(out[n], kSentinel);
        }
      }
    }
  }
}

// Streaming stores in the pass that writes the output, at every output alignment: layernorm
// (the Normalize pass), and softmax storing kAcc alone, which keeps its exp row in the scratch
// when the row length is static (RowOpScratchBytes) and in the output when it is symbolic.
TEST(RowOpTest, StreamingStoresAtEveryAlignment) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const int64_t lanes = TargetFor(isa).f32_lanes();
    for (int64_t cols : {1, 5, 16, 33, 100}) {
      for (const bool static_cols : {false, true}) {
        for (auto [op, name] : {std::pair{ir::RowOpKind::kSoftmax, "softmax"},
                                std::pair{ir::RowOpKind::kLayerNorm, "ln"}}) {
          ir::Kernel k = RowKernel(op, 2,
                                   absl::StrCat("row_stream_", name, "_", device::IsaName(isa), "_",
                                                cols, static_cols ? "_static" : ""));
          if (static_cols) {
            MakeRowLengthStatic(k, cols);
          }
          if (op == ir::RowOpKind::kSoftmax) {  // out = acc: the exp row is kept
            Program p;
            k.output = {};
            const int v = p.Acc();
            k.output = p.nodes();
            k.stores = {{3, v}};
          }
          k.config.streaming_stores = true;
          const int64_t scratch = KernelScratchBytes(k);
          EXPECT_EQ(scratch > 0, static_cols && op == ir::RowOpKind::kSoftmax) << k.name;
          if (!static_cols || cols >= 2 * lanes) {  // else the row has no aligned vector
            EXPECT_NE(KernelAssembly(k, TargetFor(isa)).find("vmovntps"), std::string::npos)
                << k.name;
          }
          absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
          ASSERT_TRUE(c.ok()) << c.status();
          for (int64_t offset = 0; offset < lanes; offset += 3) {
            const int64_t rows = 4, n = rows * cols, size = n + 2 * lanes;
            std::vector<float> x = RandomVector(n, 31, -3.f, 3.f);
            std::vector<float> w = RandomVector(cols, 32, 0.5f, 1.5f), b = RandomVector(cols, 33);
            device::AlignedBuffer buffer(static_cast<size_t>(size) * sizeof(float));
            float* storage = static_cast<float*>(buffer.data());
            std::fill(storage, storage + size, kSentinel);
            float* out = storage + offset;
            RunGrid(c->entry, {x.data(), w.data(), b.data(), out}, {1, rows, cols}, rows, 1, 0, 0,
                    scratch);
            for (int64_t r = 0; r < rows; ++r) {
              std::vector<double> row(cols);
              for (int64_t j = 0; j < cols; ++j) row[j] = 1.5 * x[r * cols + j];
              std::vector<double> y = ReferenceRow(op, row, 1e-5);
              for (int64_t j = 0; j < cols; ++j) {
                const double want = op == ir::RowOpKind::kSoftmax ? y[j] : y[j] * w[j] + b[j];
                ASSERT_NEAR(out[r * cols + j], want, 2e-5 * std::max(1.0, std::abs(want)))
                    << k.name << " offset " << offset << " row " << r << " col " << j;
              }
            }
            for (int64_t i = 0; i < offset; ++i) ASSERT_EQ(storage[i], kSentinel);
            for (int64_t i = offset + n; i < size; ++i) ASSERT_EQ(storage[i], kSentinel);
          }
        }
      }
    }
  }
}

// Each row prefetches the next row of its streamed input into the L2 (prefetcht1): softmax
// keeping exp in its exp pass, layernorm in its final pass. An input every row reads the same
// (row stride 0) is in cache already and is not prefetched.
TEST(RowOpTest, NextRowPrefetchedFromTheStreamedInputOnly) {
  for (auto [op, name] : {std::pair{ir::RowOpKind::kSoftmax, "softmax"},
                          std::pair{ir::RowOpKind::kLayerNorm, "ln"}}) {
    for (const bool same_every_row : {false, true}) {
      ir::Kernel k = RowKernel(op, 4, absl::StrCat("row_prefetch_", name, same_every_row));
      MakeRowLengthStatic(k, 4096);
      if (op == ir::RowOpKind::kSoftmax) {  // out = acc: the exp row is kept
        Program p;
        const int v = p.Acc();
        k.output = p.nodes();
        k.stores = {{3, v}};
      }
      k.config.streaming_stores = true;
      if (same_every_row) k.accesses[0].strides = {0, 0, 1};
      const std::string assembly = KernelAssembly(k, TargetFor(Isa::kAvx512));
      EXPECT_EQ(CountOf(assembly, "prefetcht1") > 0, !same_every_row) << k.name;
    }
  }
}

}  // namespace
}  // namespace pto::jit::testing
