#include "device/machine_limits.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "device/aligned_buffer.h"
#include "device/fma_loops.h"

namespace pto::device {
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

// The sum of n 64-bit words, in 8 independent chains so that the loads, not the adds, bound it.
uint64_t SumWords(const uint64_t* w, int64_t n) {
  uint64_t acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += w[i + j];
  }
  for (; i < n; ++i) acc[0] += w[i];
  uint64_t total = 0;
  for (uint64_t a : acc) total += a;
  return total;
}

void FillWords(uint64_t* w, int64_t n, uint64_t value) {
  for (int64_t i = 0; i < n; ++i) w[i] = value + static_cast<uint64_t>(i);
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace

double PeakBurstGflops(const DeviceInfo& device, int threads, int64_t iterations) {
  auto loop = device.isa == Isa::kAvx512                   ? &FmaLoopAvx512
              : device.isa == Isa::kAvx2 && device.has_fma ? &FmaLoopAvx2
                                                           : &MulAddLoopSse2;
  std::vector<float> sinks(threads * 16);
  std::vector<double> flops(threads);
  const double seconds =
      TimeReleased(threads, [&](int t) { flops[t] = loop(iterations, &sinks[t * 16]); });
  double total = 0;
  for (double f : flops) total += f;
  return seconds > 0 ? total / seconds * 1e-9 : 0;
}

double MeasurePeakGflops(const DeviceInfo& device, int threads, int64_t iterations, int passes) {
  double best = 0;
  for (int pass = 0; pass < passes; ++pass) {
    best = std::max(best, PeakBurstGflops(device, threads, iterations));
  }
  return best;
}

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

Bandwidth MeasureBandwidth(int threads, int64_t buffer_bytes, int passes) {
  const int64_t n = buffer_bytes / static_cast<int64_t>(sizeof(float));
  AlignedBuffer src_buffer, dst_buffer;
  if (!src_buffer.Reserve(static_cast<size_t>(n) * sizeof(float)) ||
      !dst_buffer.Reserve(static_cast<size_t>(n) * sizeof(float))) {
    return {};
  }
  auto* src = static_cast<float*>(src_buffer.data());
  auto* dst = static_cast<float*>(dst_buffer.data());
  // First touch from the threads that stream them, so pages are mapped before timing.
  const int64_t chunk = (n + threads - 1) / threads;
  TimeReleased(threads, [&](int t) {
    const int64_t lo = std::min(n, t * chunk), hi = std::min(n, lo + chunk);
    for (int64_t i = lo; i < hi; ++i) src[i] = static_cast<float>(i % 1024) * (1.0f / 1024);
    std::memset(dst + lo, 0, (hi - lo) * sizeof(float));
  });
  auto best_of_passes = [&](bool streaming_stores) {
    double best = 0;
    for (int pass = 0; pass < passes; ++pass) {
      const float s = 1.0f + 1e-6f * static_cast<float>(pass);
      best = std::max(best, ScalePassGbs(src, dst, n, threads, s, streaming_stores));
    }
    return best;
  };
  Bandwidth bandwidth;
  bandwidth.ordinary_stores_gbs = best_of_passes(false);
  bandwidth.streaming_stores_gbs = best_of_passes(true);
  return bandwidth;
}

HandoffRates MeasureHandoff(int64_t buffer_bytes, int rounds) {
  const int64_t n = buffer_bytes / static_cast<int64_t>(sizeof(uint64_t));
  AlignedBuffer buffer;
  if (n <= 0 || rounds <= 0 || !buffer.Reserve(static_cast<size_t>(n) * sizeof(uint64_t))) {
    return {};
  }
  auto* words = static_cast<uint64_t*>(buffer.data());
  const double bytes = static_cast<double>(n) * sizeof(uint64_t);
  // The sums go to a volatile so that the reads are not optimized away.
  volatile uint64_t sink = 0;
  auto timed_read = [&] {
    const auto start = Clock::now();
    sink = sink + SumWords(words, n);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return seconds > 0 ? bytes / seconds * 1e-9 : 0.0;
  };
  HandoffRates rates;
  {
    // turn: 2r means the writer's round r, 2r + 1 the reader's.
    std::atomic<int> turn{0};
    std::vector<double> other;
    std::thread reader([&] {
      for (int r = 0; r < rounds; ++r) {
        while (turn.load(std::memory_order_acquire) != 2 * r + 1) {
        }
        other.push_back(timed_read());
        turn.store(2 * r + 2, std::memory_order_release);
      }
    });
    for (int r = 0; r < rounds; ++r) {
      while (turn.load(std::memory_order_acquire) != 2 * r) {
      }
      FillWords(words, n, static_cast<uint64_t>(r));
      turn.store(2 * r + 1, std::memory_order_release);
    }
    reader.join();
    rates.other_thread_gbs = Median(std::move(other));
  }
  std::vector<double> same;
  for (int r = 0; r < rounds; ++r) {
    FillWords(words, n, static_cast<uint64_t>(r));
    same.push_back(timed_read());
  }
  rates.same_thread_gbs = Median(std::move(same));
  return rates;
}

MachinePeaks MeasuredPeaks(const DeviceInfo& device, int threads) {
  static std::mutex mu;
  static std::map<int, MachinePeaks>* measured = new std::map<int, MachinePeaks>();
  threads = std::max(1, threads);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = measured->find(threads); it != measured->end()) return it->second;
  constexpr int64_t kIterations = 2'000'000;  // about 10 ms per burst at 100 GFLOP/s a thread
  constexpr int64_t kBufferBytes = int64_t{64} << 20;
  MachinePeaks peaks;
  peaks.gflops = MeasurePeakGflops(device, threads, kIterations, 3);
  const Bandwidth b = MeasureBandwidth(threads, kBufferBytes, 2);
  peaks.bandwidth_gbs = std::max(b.ordinary_stores_gbs, b.streaming_stores_gbs);
  (*measured)[threads] = peaks;
  return peaks;
}

}  // namespace pto::device
