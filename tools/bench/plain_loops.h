// Plain C++ loops (OpenMP-parallel over rows) that complete the OpenBLAS baselines where BLAS
// has no operation: bias + gelu, and a row softmax.
#ifndef PTO_TOOLS_BENCH_PLAIN_LOOPS_H_
#define PTO_TOOLS_BENCH_PLAIN_LOOPS_H_

#include <cstdint>

namespace pto::bench {

// x[r, c] = gelu(x[r, c] + bias[c]) (exact erf form), in place.
void BiasGeluRows(float* x, const float* bias, int64_t rows, int64_t cols, int threads);
// x[r, :] = softmax(x[r, :]), in place.
void SoftmaxRows(float* x, int64_t rows, int64_t cols, int threads);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_PLAIN_LOOPS_H_
