// Compiled with -mavx2 -mfma (see device/CMakeLists.txt); called only on CPUs that have it.
#include <immintrin.h>

#include <initializer_list>

#include "device/fma_loops.h"

namespace pto::device {

double FmaLoopAvx2(int64_t iterations, float* sink) {
  // 12 named accumulators (an array would be kept in memory): 12 independent dependency
  // chains cover an FMA latency of 4 to 6 cycles on 2 pipes.
  const __m256 mul = _mm256_set1_ps(0.999999f), add = _mm256_set1_ps(1e-7f);
  __m256 a0 = _mm256_set1_ps(1.00f), a1 = _mm256_set1_ps(1.01f), a2 = _mm256_set1_ps(1.02f);
  __m256 a3 = _mm256_set1_ps(1.03f), a4 = _mm256_set1_ps(1.04f), a5 = _mm256_set1_ps(1.05f);
  __m256 a6 = _mm256_set1_ps(1.06f), a7 = _mm256_set1_ps(1.07f), a8 = _mm256_set1_ps(1.08f);
  __m256 a9 = _mm256_set1_ps(1.09f), a10 = _mm256_set1_ps(1.10f), a11 = _mm256_set1_ps(1.11f);
  auto step = [&](const __m256& a) { return _mm256_fmadd_ps(a, mul, add); };
  for (int64_t i = 0; i < iterations; ++i) {
    a0 = step(a0), a1 = step(a1), a2 = step(a2), a3 = step(a3), a4 = step(a4), a5 = step(a5);
    a6 = step(a6), a7 = step(a7), a8 = step(a8), a9 = step(a9), a10 = step(a10), a11 = step(a11);
    // Keeps the compiler from collapsing iterations; the values stay in registers.
    __asm__ volatile(""
                     : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6),
                       "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11));
  }
  __m256 total = a0;
  for (__m256 a : {a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11}) total = _mm256_add_ps(total, a);
  alignas(64) float lanes[8];
  _mm256_store_ps(lanes, total);
  *sink = lanes[0];
  return static_cast<double>(iterations) * 12 * 8 * 2;
}

}  // namespace pto::device
