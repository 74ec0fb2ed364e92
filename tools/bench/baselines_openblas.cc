#include "tools/bench/baselines_openblas.h"

#include <cblas.h>

#include <cmath>
#include <memory>
#include <string>

#include "tools/bench/buffers.h"
#include "tools/bench/plain_loops.h"

namespace pto::bench {

std::string OpenblasDescription() {
  return std::string("OpenBLAS (") + openblas_get_config() + ")";
}

bool OpenblasAvailable() { return true; }

std::string OpenblasCoreOverride(device::Isa isa) {
  if (std::string(openblas_get_corename()) != "Prescott") return "";
  switch (isa) {
    case device::Isa::kAvx512:
      return "SkylakeX";
    case device::Isa::kAvx2:
      return "Haswell";
    case device::Isa::kSse2:
      return "";
  }
  return "";
}

BackendFactory OpenblasMatmul(MatmulShape s) {
  return [s](const std::vector<IoSet>& sets, int threads) -> absl::StatusOr<Prepared> {
    openblas_set_num_threads(threads);
    Prepared prepared;
    prepared.run = [s, sets, threads](int set) {
      openblas_set_num_threads(threads);
      const IoSet& io = sets[set];
      // A constant B is not rotated (one copy, as pto and oneDNN keep one).
      const float* weights = s.constant_b ? sets[0].inputs[1] : io.inputs[1];
      for (int64_t b = 0; b < s.batch; ++b) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f,
                    io.inputs[0] + b * s.m * s.k, s.k, weights + b * s.k * s.n, s.n, 0.0f,
                    io.outputs[0] + b * s.m * s.n, s.n);
      }
    };
    return prepared;
  };
}

BackendFactory OpenblasLinearBiasGelu(int64_t m, int64_t k, int64_t n) {
  return [=](const std::vector<IoSet>& sets, int threads) -> absl::StatusOr<Prepared> {
    Prepared prepared;
    prepared.run = [=](int set) {
      openblas_set_num_threads(threads);
      const IoSet& io = sets[set];
      // Weight and bias are constants: one copy, not rotated.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, io.inputs[0], k,
                  sets[0].inputs[1], n, 0.0f, io.outputs[0], n);
      BiasGeluRows(io.outputs[0], sets[0].inputs[2], m, n, threads);
    };
    return prepared;
  };
}

BackendFactory OpenblasAttention(int64_t batch, int64_t seq, int64_t dh) {
  return [=](const std::vector<IoSet>& sets, int threads) -> absl::StatusOr<Prepared> {
    auto scores = std::make_shared<AlignedFloats>(batch * seq * seq);
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
    Prepared prepared;
    prepared.intermediate_bytes = scores->size() * static_cast<int64_t>(sizeof(float));
    prepared.run = [=](int set) {
      openblas_set_num_threads(threads);
      const IoSet& io = sets[set];
      for (int64_t b = 0; b < batch; ++b) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, seq, seq, dh, scale,
                    io.inputs[0] + b * seq * dh, dh, io.inputs[1] + b * seq * dh, dh, 0.0f,
                    scores->data() + b * seq * seq, seq);
      }
      SoftmaxRows(scores->data(), batch * seq, seq, threads);
      for (int64_t b = 0; b < batch; ++b) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, seq, dh, seq, 1.0f,
                    scores->data() + b * seq * seq, seq, io.inputs[2] + b * seq * dh, dh, 0.0f,
                    io.outputs[0] + b * seq * dh, dh);
      }
    };
    return prepared;
  };
}

}  // namespace pto::bench
