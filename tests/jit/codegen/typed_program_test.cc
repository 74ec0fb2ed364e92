// Typed expression programs: an elementwise kernel mixing f32 and i32 accesses (iota, integer
// arithmetic, casts, comparisons, select), run over tile ranges that split rows and columns;
// and the dtype checks of ValidateKernel.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/codegen/emit_kernel.h"
#include "kernel_test_util.h"

namespace pto::jit::testing {
namespace {

using ir::DType;
using ir::ExprNode;
using ir::ExprOp;

int Push(std::vector<ExprNode>& p, ExprOp op, DType dtype, int a = -1, int b = -1, int c = -1) {
  ExprNode n;
  n.op = op;
  n.dtype = dtype;
  n.a = a;
  n.b = b;
  n.c = c;
  p.push_back(n);
  return static_cast<int>(p.size()) - 1;
}

// x (i32 [rows, cols]), y (f32 [rows, cols]):
//   out_i = (x + iota(1)) * cast<i32>(y)       (i32, wrapping)
//   out_f = x < iota(1) ? y : abs(cast<f32>(x)) (f32)
ir::Kernel MixedKernel(int64_t rows, int64_t cols) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = "i32_mixed_" + std::to_string(rows) + "x" + std::to_string(cols);
  k.num_buffers = 4;
  k.domain = {rows, cols};
  for (int b = 0; b < 4; ++b) k.accesses.push_back(MakeAccess(b, {cols, 1}));
  k.accesses[0].dtype = k.accesses[2].dtype = DType::kI32;
  std::vector<ExprNode>& p = k.output;
  const int x = Push(p, ExprOp::kLoad, DType::kI32);
  p[x].access = 0;
  const int y = Push(p, ExprOp::kLoad, DType::kF32);
  p[y].access = 1;
  const int col = Push(p, ExprOp::kIota, DType::kI32);
  p[col].axis = 1;
  const int sum = Push(p, ExprOp::kAdd, DType::kI32, x, col);
  const int yi = Push(p, ExprOp::kCast, DType::kI32, y);
  const int out_i = Push(p, ExprOp::kMul, DType::kI32, sum, yi);
  const int less = Push(p, ExprOp::kLt, DType::kF32, x, col);
  const int xf = Push(p, ExprOp::kCast, DType::kF32, x);
  const int ax = Push(p, ExprOp::kAbs, DType::kF32, xf);
  const int out_f = Push(p, ExprOp::kSelect, DType::kF32, less, y, ax);
  k.stores = {{2, out_i}, {3, out_f}};
  return k;
}

TEST(TypedProgramTest, MixedDTypesAcrossTiles) {
  std::mt19937 rng(4);
  std::uniform_int_distribution<int32_t> ints(-40, 40);
  std::uniform_real_distribution<float> floats(-1e6f, 1e6f);
  for (int64_t rows : {1, 3}) {
    for (int64_t cols : {1, 7, 33, 100}) {
      const ir::Kernel k = MixedKernel(rows, cols);
      absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(device::Isa::kAvx512), k);
      ASSERT_TRUE(c.ok()) << c.status();
      const int64_t n = rows * cols;
      std::vector<int32_t> x(n), out_i(n, 0);
      std::vector<float> y(n), out_f(n, 0);
      for (int64_t i = 0; i < n; ++i) {
        x[i] = ints(rng);
        y[i] = floats(rng);
      }
      y[0] = std::numeric_limits<float>::quiet_NaN();
      for (auto [t0, t1] : {std::pair<int64_t, int64_t>{0, 0}, {1, 5}}) {
        RunGrid(c->entry,
                {reinterpret_cast<float*>(x.data()), y.data(),
                 reinterpret_cast<float*>(out_i.data()), out_f.data()},
                {}, rows, cols, t0, t1);
        for (int64_t i = 0; i < n; ++i) {
          const int64_t j = i % cols;
          const int32_t yi = std::isnan(y[i]) ? 0 : static_cast<int32_t>(y[i]);
          const int32_t want_i =
              static_cast<int32_t>(static_cast<uint32_t>(x[i] + j) * static_cast<uint32_t>(yi));
          ASSERT_EQ(out_i[i], want_i) << rows << "x" << cols << " at " << i;
          const float want_f = x[i] < j ? y[i] : std::fabs(static_cast<float>(x[i]));
          if (std::isnan(want_f)) {
            ASSERT_TRUE(std::isnan(out_f[i])) << i;
          } else {
            ASSERT_EQ(out_f[i], want_f) << rows << "x" << cols << " at " << i;
          }
        }
      }
    }
  }
}

TEST(TypedProgramTest, ValidateKernelChecksDTypes) {
  ir::Kernel k = MixedKernel(2, 3);
  ASSERT_TRUE(ValidateKernel(k).ok());
  k.stores[0].value = 9;  // the f32 select into the i32 access
  absl::Status s = ValidateKernel(k);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "kernel 'i32_mixed_2x3': store 0 writes f32 v9 to i32 access a2");
  k = MixedKernel(2, 3);
  k.output[3].b = 1;  // an i32 add of an f32 load
  s = ValidateKernel(k);
  EXPECT_EQ(s.message(), "i32_mixed_2x3 output node v3 (add): operand b is f32, expected i32");
  k = MixedKernel(2, 3);
  k.accesses[1].dtype = DType::kI32;  // a load that disagrees with its access
  s = ValidateKernel(k);
  EXPECT_EQ(s.message(), "kernel 'i32_mixed_2x3': output node v1 (load) is f32, expected i32");
  k = MixedKernel(2, 3);
  k.output[2].axis = 2;
  s = ValidateKernel(k);
  EXPECT_EQ(s.message(),
            "i32_mixed_2x3 output node v2 (iota): axis 2 is not a dim of the domain (rank 2)");
  k = MixedKernel(2, 3);
  k.output[8].dtype = DType::kI32;
  k.output[8].a = 0;  // abs of i32 is fine, but its select then mixes dtypes
  s = ValidateKernel(k);
  EXPECT_EQ(s.message(), "i32_mixed_2x3 output node v9 (select): operand c is i32, expected f32");
}

}  // namespace
}  // namespace pto::jit::testing
