// The fallback for CPUs without FMA: SSE2 multiply and add (counted as 2 FLOPs per lane).
#include <immintrin.h>

#include <initializer_list>

#include "device/fma_loops.h"

namespace pto::device {

double MulAddLoopSse2(int64_t iterations, float* sink) {
  // 12 named accumulators (an array would be kept in memory): 12 independent dependency
  // chains cover an FMA latency of 4 to 6 cycles on 2 pipes.
  const __m128 mul = _mm_set1_ps(0.999999f), add = _mm_set1_ps(1e-7f);
  __m128 a0 = _mm_set1_ps(1.00f), a1 = _mm_set1_ps(1.01f), a2 = _mm_set1_ps(1.02f);
  __m128 a3 = _mm_set1_ps(1.03f), a4 = _mm_set1_ps(1.04f), a5 = _mm_set1_ps(1.05f);
  __m128 a6 = _mm_set1_ps(1.06f), a7 = _mm_set1_ps(1.07f), a8 = _mm_set1_ps(1.08f);
  __m128 a9 = _mm_set1_ps(1.09f), a10 = _mm_set1_ps(1.10f), a11 = _mm_set1_ps(1.11f);
  auto step = [&](const __m128& a) { return _mm_add_ps(_mm_mul_ps(a, mul), add); };
  for (int64_t i = 0; i < iterations; ++i) {
    a0 = step(a0), a1 = step(a1), a2 = step(a2), a3 = step(a3), a4 = step(a4), a5 = step(a5);
    a6 = step(a6), a7 = step(a7), a8 = step(a8), a9 = step(a9), a10 = step(a10), a11 = step(a11);
    // Keeps the compiler from collapsing iterations; the values stay in registers.
    __asm__ volatile(""
                     : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6),
                       "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11));
  }
  __m128 total = a0;
  for (__m128 a : {a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11}) total = _mm_add_ps(total, a);
  alignas(64) float lanes[4];
  _mm_store_ps(lanes, total);
  *sink = lanes[0];
  return static_cast<double>(iterations) * 12 * 4 * 2;
}

}  // namespace pto::device
