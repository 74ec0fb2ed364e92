// Matmul kernels built by hand for codegen tests, and their check against a double-precision
// reference (tests/jit/codegen/matmul_test.cc, matmul_config_sweep_test.cc).
#ifndef PTO_TESTS_JIT_CODEGEN_MATMUL_KERNEL_BUILDER_H_
#define PTO_TESTS_JIT_CODEGEN_MATMUL_KERNEL_BUILDER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "jit/ir/tile_ir.h"
#include "jit/kernel_abi.h"

namespace pto::jit::testing {

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
  bool light_epilogue = false;  // with an epilogue: the light one (see MatMulOptions)
  // B also passed prepacked in column blocks of this (ir::PackedB) as buffer 5; 0: not.
  int prepacked_block = 0;
};

struct MatMulOptions {
  bool transpose_a = false;
  bool broadcast_b = false;
  BLayout b_layout = BLayout::kKN;
  bool epilogue = false;
  // The epilogue without the activation: out = acc * 0.5 + bias[n] + residual[b,m,n] (inlined
  // at each accumulator, where the gelu one is a function the micro-tiles call).
  bool light_epilogue = false;
  int mr = 4, nrv = 2, vw = 0;
  // A static M (the domain's dim 1 a constant; the case's m must equal it), else symbol 1.
  std::optional<int64_t> static_m;
  // A static N (the domain's dim 2), else symbol 2; cases must match it.
  std::optional<int64_t> static_n;
  // A static K, else symbol 3; cases must match it.
  std::optional<int64_t> static_k;
  // B prepacked in column blocks of this (buffer 5, as the plan passes a constant weight);
  // B must then be shared by the batch entries (broadcast_b) and stored [K, N]. 0: not.
  int prepacked_block = 0;
  // When set, the kernel's whole TileConfig (mr, nrv and vw above are then ignored).
  std::optional<ir::TileConfig> config;
};

// Elements of B per batch entry.
int64_t BSize(BLayout layout, int64_t n, int64_t k);
// Element index of B[batch x][k l][n j] in the B buffer.
int64_t BIndex(const MatMulCase& c, int64_t x, int64_t l, int64_t j);

// C[b,m,n] = epilogue(sum_k A[b,m,k] B[b,k,n]); domain [s0, s1, s2] (batch, M, N), K = s3.
// A is [b][m][k] (or [b][k][m] when transposed), B per `b_layout`.
// With `epilogue`: out = gelu_tanh(acc + bias[n]) + residual[b,m,n], or the light epilogue.
ir::Kernel MatMulKernel(const MatMulOptions& o, const std::string& name);
ir::Kernel MatMulKernel(bool transpose_a, bool broadcast_b, bool epilogue, int mr, int nrv, int vw,
                        const std::string& name);

// Runs `fn` over the case's grid (whole, or in tiles of tile0 x tile1) with `scratch_bytes` of
// scratch and checks every output (and that nothing past the output was written) with gtest
// assertions naming `what`.
void CheckMatMul(pto_kernel_fn fn, const MatMulCase& c, bool epilogue, int64_t tile0, int64_t tile1,
                 const std::string& what, int64_t scratch_bytes = 0);

}  // namespace pto::jit::testing

#endif  // PTO_TESTS_JIT_CODEGEN_MATMUL_KERNEL_BUILDER_H_
