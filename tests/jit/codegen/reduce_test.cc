#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "kernel_builders.h"
#include "kernel_test_util.h"

namespace pto::jit::testing {
namespace {

using device::Isa;
using ir::ExprOp;
using ir::SymExpr;

constexpr float kSentinel = 12345.f;

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

TEST(ReduceTest, EveryAxisAndKind) {
  const std::vector<std::vector<int64_t>> shapes = {
      {3, 17, 33}, {1, 1, 1}, {2, 100, 3}, {5, 3, 17}, {1, 33, 1}};
  for (int axis = 0; axis < 3; ++axis) {
    for (ir::ReduceKind kind :
         {ir::ReduceKind::kSum, ir::ReduceKind::kMax, ir::ReduceKind::kMean}) {
      for (int unroll : {1, 3}) {
        ir::Kernel k = ReduceKernel(axis, kind, unroll,
                                    "reduce_" + std::to_string(axis) + "_" +
                                        std::to_string(static_cast<int>(kind)) + "_u" +
                                        std::to_string(unroll));
        absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx512), k);
        ASSERT_TRUE(c.ok()) << c.status();
        for (const std::vector<int64_t>& shape : shapes) {
          const std::vector<int64_t> st = Strides(shape);
          std::vector<int64_t> oshape = shape;
          oshape[axis] = 1;
          const std::vector<int64_t> ost = Strides(oshape);
          const int64_t n = shape[0] * shape[1] * shape[2];
          const int64_t on = n / shape[axis];
          std::vector<float> x = RandomVector(n, 11), bias = RandomVector(on, 12),
                             out(on + 1, kSentinel);
          int64_t outer = 1, inner = 1;
          for (int d = 0; d < axis; ++d) outer *= shape[d];
          for (int d = axis + 1; d < 3; ++d) inner *= shape[d];
          for (auto [t0, t1] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {2, 5}}) {
            std::fill(out.begin(), out.end(), kSentinel);
            RunGrid(c->entry, {x.data(), bias.data(), out.data()}, shape, outer, inner, t0, t1);
            for (int64_t i = 0; i < shape[0]; ++i) {
              for (int64_t j = 0; j < shape[1]; ++j) {
                for (int64_t l = 0; l < shape[2]; ++l) {
                  int64_t p[3] = {i, j, l};
                  if (p[axis] != 0) continue;
                  double acc = kind == ir::ReduceKind::kMax ? -INFINITY : 0;
                  for (int64_t r = 0; r < shape[axis]; ++r) {
                    p[axis] = r;
                    const double v = 2.0 * x[p[0] * st[0] + p[1] * st[1] + p[2] * st[2]];
                    acc = kind == ir::ReduceKind::kMax ? std::max(acc, v) : acc + v;
                  }
                  if (kind == ir::ReduceKind::kMean) acc /= shape[axis];
                  p[axis] = 0;
                  const int64_t o = p[0] * ost[0] + p[1] * ost[1] + p[2] * ost[2];
                  ASSERT_NEAR(out[o], acc + bias[o], 1e-5 * (1 + shape[axis]))
                      << "axis " << axis << " kind " << static_cast<int>(kind) << " shape "
                      << shape[0] << "x" << shape[1] << "x" << shape[2] << " tiles " << t0;
                }
              }
            }
            ASSERT_EQ(out[on], kSentinel);
          }
        }
      }
    }
  }
}

TEST(ReduceTest, EmptyReducedAxisAndEmptyGrid) {
  for (int axis = 0; axis < 3; ++axis) {
    ir::Kernel k =
        ReduceKernel(axis, ir::ReduceKind::kSum, 2, "reduce_empty_" + std::to_string(axis));
    absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx512), k);
    ASSERT_TRUE(c.ok()) << c.status();
    // Reduced extent 0: the sum is 0, so out = bias.
    std::vector<int64_t> shape = {2, 3, 4};
    shape[axis] = 0;
    std::vector<float> x(1, 1.f), bias = RandomVector(64, 13), out(64, kSentinel);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= shape[d];
    for (int d = axis + 1; d < 3; ++d) inner *= shape[d];
    RunGrid(c->entry, {x.data(), bias.data(), out.data()}, shape, outer, inner);
    for (int64_t i = 0; i < outer * inner; ++i) ASSERT_EQ(out[i], bias[i]);
    ASSERT_EQ(out[outer * inner], kSentinel);
    // Another dim 0: nothing is written.
    shape = {2, 3, 4};
    shape[(axis + 1) % 3] = 0;
    std::fill(out.begin(), out.end(), kSentinel);
    outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= shape[d];
    for (int d = axis + 1; d < 3; ++d) inner *= shape[d];
    RunGrid(c->entry, {x.data(), bias.data(), out.data()}, shape, outer, inner);
    for (float v : out) ASSERT_EQ(v, kSentinel);
  }
}

// ReduceKind::kMax propagates NaN (like numpy.max): a line with a NaN anywhere (first element,
// a middle vector lane, the scalar tail) reduces to NaN; lines of -inf reduce to -inf.
TEST(ReduceTest, MaxPropagatesNaN) {
  const std::vector<std::vector<int64_t>> shapes = {{4, 1, 3},  {3, 17, 33}, {2, 100, 5},
                                                    {5, 3, 17}, {4, 33, 2},  {2, 8, 16}};
  for (Isa isa : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
    for (int axis = 0; axis < 3; ++axis) {
      for (int unroll : {1, 3}) {
        ir::Kernel k =
            ReduceKernel(axis, ir::ReduceKind::kMax, unroll,
                         "reduce_max_nan_" + std::to_string(axis) + "_u" + std::to_string(unroll));
        absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
        ASSERT_TRUE(c.ok()) << c.status();
        for (const std::vector<int64_t>& shape : shapes) {
          const std::vector<int64_t> st = Strides(shape);
          const int64_t n = shape[0] * shape[1] * shape[2], len = shape[axis];
          int64_t outer = 1, inner = 1;
          for (int d = 0; d < axis; ++d) outer *= shape[d];
          for (int d = axis + 1; d < 3; ++d) inner *= shape[d];
          std::vector<float> x = RandomVector(n, 14), bias = RandomVector(outer * inner, 15);
          auto at = [&](int64_t o, int64_t r, int64_t i) { return (o * len + r) * inner + i; };
          std::vector<int> nan_lines(2, 0);
          for (int64_t o = 0; o < outer; ++o) {
            for (int64_t i = 0; i < inner; ++i) {
              const int64_t t = o * inner + i;
              if (t % 6 == 5) {
                for (int64_t r = 0; r < len; ++r) x[at(o, r, i)] = -INFINITY;
              }
              const int64_t pos[] = {-1, 0, len / 2, len - 1, (len * 3) / 4};
              if (pos[t % 5] >= 0) x[at(o, pos[t % 5], i)] = t % 2 == 0 ? NAN : -NAN;
            }
          }
          for (auto [t0, t1] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {2, 5}}) {
            std::vector<float> out(outer * inner + 1, kSentinel);
            RunGrid(c->entry, {x.data(), bias.data(), out.data()}, shape, outer, inner, t0, t1);
            for (int64_t o = 0; o < outer; ++o) {
              for (int64_t i = 0; i < inner; ++i) {
                double acc = -INFINITY;
                for (int64_t r = 0; r < len; ++r) {
                  const double v = 2.0 * x[at(o, r, i)];
                  if (!std::isnan(acc) && (std::isnan(v) || v > acc)) acc = v;
                }
                const int64_t idx = o * inner + i;
                const double want = acc + bias[idx];
                ++nan_lines[std::isnan(want) ? 1 : 0];
                if (std::isnan(want)) {
                  ASSERT_TRUE(std::isnan(out[idx]))
                      << "axis " << axis << " line " << idx << " got " << out[idx] << " shape "
                      << shape[0] << "x" << shape[1] << "x" << shape[2] << " isa "
                      << device::IsaName(isa);
                } else if (std::isinf(want)) {
                  ASSERT_EQ(out[idx], want) << "axis " << axis << " line " << idx;
                } else {
                  ASSERT_NEAR(out[idx], want, 1e-6 * std::max(1.0, std::abs(want)))
                      << "axis " << axis << " line " << idx;
                }
              }
            }
            ASSERT_EQ(out[outer * inner], kSentinel);
          }
          ASSERT_GT(nan_lines[1], 0);
        }
      }
    }
  }
}

}  // namespace
}  // namespace pto::jit::testing
