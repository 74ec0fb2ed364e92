#include "tools/bench/roofline.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "tools/bench/buffers.h"
#include "tools/bench/fma_loops.h"

namespace pto::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Runs body(t) on `threads` threads released together, the calling thread being thread 0 (a
// waiting caller would be one more runnable thread than cores: a preempted worker then
// stretched a burst by a scheduler tick). Returns the seconds from the release to the last
// thread's end, thread start-up excluded.
template <typename F>
double TimeReleased(int threads, F body) {
  std::vector<Clock::time_point> ends(threads);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) {
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      body(t);
      ends[t] = Clock::now();
    });
  }
  while (ready.load() < threads - 1) {
  }
  const auto start = Clock::now();
  go.store(true, std::memory_order_release);
  body(0);
  ends[0] = Clock::now();
  for (std::thread& th : pool) th.join();
  Clock::time_point last = start;
  for (const Clock::time_point& end : ends) last = std::max(last, end);
  return std::chrono::duration<double>(last - start).count();
}

}  // namespace

double PeakBurstGflops(const device::DeviceInfo& device, int threads, int64_t iterations) {
  auto loop = device.isa == device::Isa::kAvx512                   ? &FmaLoopAvx512
              : device.isa == device::Isa::kAvx2 && device.has_fma ? &FmaLoopAvx2
                                                                   : &MulAddLoopSse2;
  std::vector<float> sinks(threads * 16);
  std::vector<double> flops(threads);
  const double seconds =
      TimeReleased(threads, [&](int t) { flops[t] = loop(iterations, &sinks[t * 16]); });
  double total = 0;
  for (double f : flops) total += f;
  return seconds > 0 ? total / seconds * 1e-9 : 0;
}

double MeasurePeakGflops(const device::DeviceInfo& device, int threads) {
  constexpr int64_t kIterations = 20'000'000;  // about 0.1 s per thread at 100 GFLOP/s
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {
    best = std::max(best, PeakBurstGflops(device, threads, kIterations));
  }
  return best;
}

namespace {

// dst[lo, hi) = src[lo, hi) * s, writing around the caches where the ISA allows.
void ScaleStreaming(const float* __restrict src, float* __restrict dst, int64_t lo, int64_t hi,
                    float s) {
#if defined(__x86_64__)
  int64_t i = lo;
  for (; i < hi && (reinterpret_cast<uintptr_t>(dst + i) & 15) != 0; ++i) dst[i] = src[i] * s;
  const __m128 k = _mm_set1_ps(s);
  for (; i + 4 <= hi; i += 4) _mm_stream_ps(dst + i, _mm_mul_ps(_mm_loadu_ps(src + i), k));
  for (; i < hi; ++i) dst[i] = src[i] * s;
  _mm_sfence();
#else
  for (int64_t i = lo; i < hi; ++i) dst[i] = src[i] * s;
#endif
}

// One pass of dst = src * s over n floats split across `threads` threads released together,
// with streaming or ordinary stores: read + written bytes per second.
double ScalePassGbs(const float* src, float* dst, int64_t n, int threads, float s,
                    bool streaming_stores) {
  const int64_t chunk = (n + threads - 1) / threads;
  const double seconds = TimeReleased(threads, [&](int t) {
    const int64_t lo = std::min(n, t * chunk), hi = std::min(n, lo + chunk);
    if (streaming_stores) {
      ScaleStreaming(src, dst, lo, hi, s);
      return;
    }
    const float* __restrict in = src;
    float* __restrict out = dst;
    for (int64_t i = lo; i < hi; ++i) out[i] = in[i] * s;
  });
  return seconds > 0 ? 2.0 * static_cast<double>(n) * sizeof(float) / seconds * 1e-9 : 0;
}

}  // namespace

Bandwidth MeasureBandwidth(int threads, int64_t buffer_bytes) {
  const int64_t n = buffer_bytes / static_cast<int64_t>(sizeof(float));
  AlignedFloats src(n), dst(n);
  // First touch from the threads that stream them, so pages are mapped before timing.
  const int64_t chunk = (n + threads - 1) / threads;
  TimeReleased(threads, [&](int t) {
    const int64_t lo = std::min(n, t * chunk), hi = std::min(n, lo + chunk);
    FillUniform(src.data() + lo, hi - lo, -1, 1, t);
    std::memset(dst.data() + lo, 0, (hi - lo) * sizeof(float));
  });
  // Best of 4 passes per kind of store, on the same buffers.
  auto best_of_passes = [&](bool streaming_stores) {
    double best = 0;
    for (int pass = 0; pass < 4; ++pass) {
      const float s = 1.0f + 1e-6f * pass;
      best = std::max(best, ScalePassGbs(src.data(), dst.data(), n, threads, s, streaming_stores));
    }
    return best;
  };
  Bandwidth bandwidth;
  bandwidth.ordinary_stores_gbs = best_of_passes(false);
  bandwidth.streaming_stores_gbs = best_of_passes(true);
  return bandwidth;
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

BandwidthBurst::BandwidthBurst(int64_t buffer_bytes)
    : n_(buffer_bytes / static_cast<int64_t>(sizeof(float))), src_(n_), dst_(n_) {
  FillUniform(src_.data(), n_, -1, 1, 7);
  std::memset(dst_.data(), 0, static_cast<size_t>(n_) * sizeof(float));
}

double BandwidthBurst::Gbs(int threads) {
  const float s = 1.0f + 1e-6f * static_cast<float>(++passes_ % 16);
  return ScalePassGbs(src_.data(), dst_.data(), n_, threads, s, /*streaming_stores=*/true);
}

double RooflineSeconds(const MachineLimits& limits, double flops, double bytes) {
  return std::max(flops / (limits.peak_gflops * 1e9), bytes / (limits.bandwidth_gbs * 1e9));
}

}  // namespace pto::bench
