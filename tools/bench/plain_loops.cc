#include "tools/bench/plain_loops.h"

#include <algorithm>
#include <cmath>

namespace pto::bench {

void BiasGeluRows(float* x, const float* bias, int64_t rows, int64_t cols, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const float v = row[c] + bias[c];
      row[c] = 0.5f * v * (1.0f + std::erf(v * 0.70710678f));
    }
  }
}

void SoftmaxRows(float* x, int64_t rows, int64_t cols, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x + r * cols;
    float max = row[0];
    for (int64_t c = 1; c < cols; ++c) max = std::max(max, row[c]);
    float sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      row[c] = std::exp(row[c] - max);
      sum += row[c];
    }
    const float inv = 1.0f / sum;
    for (int64_t c = 0; c < cols; ++c) row[c] *= inv;
  }
}

}  // namespace pto::bench
