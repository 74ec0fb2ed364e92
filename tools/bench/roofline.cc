#include "tools/bench/roofline.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "device/machine_limits.h"
#include "tools/bench/buffers.h"

namespace pto::bench {

double MeasurePeakGflops(const device::DeviceInfo& device, int threads) {
  constexpr int64_t kIterations = 20'000'000;  // about 0.1 s per thread at 100 GFLOP/s
  return device::MeasurePeakGflops(device, threads, kIterations, 3);
}

Bandwidth MeasureBandwidth(int threads, int64_t buffer_bytes) {
  return device::MeasureBandwidth(threads, buffer_bytes, 4);
}

MachineLimits MeasureLimits(const device::DeviceInfo& device, int threads, int64_t buffer_bytes) {
  MachineLimits limits;
  limits.threads = threads;
  limits.peak_gflops = MeasurePeakGflops(device, threads);
  const Bandwidth bandwidth = MeasureBandwidth(threads, buffer_bytes);
  limits.bandwidth_ordinary_stores_gbs = bandwidth.ordinary_stores_gbs;
  limits.bandwidth_gbs = std::max(bandwidth.ordinary_stores_gbs, bandwidth.streaming_stores_gbs);
  return limits;
}

std::string HandoffSummary() {
  constexpr int64_t kBytes = int64_t{1} << 20;  // a block's activation, [2048, 128] floats
  constexpr int kRounds = 50;
  const device::HandoffRates r = device::MeasureHandoff(kBytes, kRounds);
  char line[128];
  std::snprintf(line, sizeof line,
                "1 MiB another thread just wrote reads at %.0f GB/s, its own at %.0f",
                r.other_thread_gbs, r.same_thread_gbs);
  return line;
}

BandwidthBurst::BandwidthBurst(int64_t buffer_bytes)
    : n_(buffer_bytes / static_cast<int64_t>(sizeof(float))), src_(n_), dst_(n_) {
  FillUniform(src_.data(), n_, -1, 1, 7);
  std::memset(dst_.data(), 0, static_cast<size_t>(n_) * sizeof(float));
}

double BandwidthBurst::Gbs(int threads) {
  const float s = 1.0f + 1e-6f * static_cast<float>(++passes_ % 16);
  return device::ScalePassGbs(src_.data(), dst_.data(), n_, threads, s, /*streaming_stores=*/true);
}

double RooflineSeconds(const MachineLimits& limits, double flops, double bytes) {
  return std::max(flops / (limits.peak_gflops * 1e9), bytes / (limits.bandwidth_gbs * 1e9));
}

}  // namespace pto::bench
