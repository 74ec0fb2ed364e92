// The machine's limits, measured by the bench in the same run (device/machine_limits.h, with
// longer runs than Function::Profile's): fp32 peak FLOP/s and streaming memory bandwidth, per
// thread count; and the roofline they give for a case.
#ifndef PTO_TOOLS_BENCH_ROOFLINE_H_
#define PTO_TOOLS_BENCH_ROOFLINE_H_

#include <cstdint>
#include <string>

#include "device/device_info.h"
#include "device/machine_limits.h"
#include "tools/bench/buffers.h"

namespace pto::bench {

struct MachineLimits {
  int threads = 1;
  double peak_gflops = 0;    // fp32 FMA peak of `threads` threads
  double bandwidth_gbs = 0;  // read + write bytes per second, STREAM convention
  // The same copy with ordinary stores (each written line is read first): at most
  // bandwidth_gbs. Shown beside it.
  double bandwidth_ordinary_stores_gbs = 0;
};

// Best of a few runs of `threads` threads each running the FMA loop (AVX-512 when the device
// has it, else AVX2+FMA; SSE2 mul+add otherwise).
double MeasurePeakGflops(const device::DeviceInfo& device, int threads);
// One burst of the FMA loop (device/machine_limits.h).
using device::PeakBurstGflops;
// Iterations of a burst the bench times before and after a case's backends: about a
// millisecond.
inline constexpr int64_t kPeakBurstIterations = 400'000;
// Best of a few passes of dst[i] = src[i] * s over two buffers of `buffer_bytes` each, split
// across `threads` threads, once with ordinary stores and once with streaming ones (x86 only;
// elsewhere ordinary ones again), which bypass the caches and skip the write-allocate read: the
// most the machine streams (1.36x ordinary stores at 2 threads on the 2-core EPYC of
// docs/performance.md). Counts bytes read plus bytes written (the write-allocate read is not
// counted, as STREAM does not).
using Bandwidth = device::Bandwidth;
Bandwidth MeasureBandwidth(int threads, int64_t buffer_bytes);

MachineLimits MeasureLimits(const device::DeviceInfo& device, int threads, int64_t buffer_bytes);

// One pass of MeasureBandwidth's streaming-store copy over two buffers allocated and touched
// once (so a burst costs only its copy), timed before and after a memory-bound case's
// backends.
class BandwidthBurst {
 public:
  explicit BandwidthBurst(int64_t buffer_bytes);
  // Read + written bytes per second of one pass split across `threads` threads released
  // together.
  double Gbs(int threads);

 private:
  int64_t n_;
  AlignedFloats src_, dst_;
  int passes_ = 0;
};
// The buffers of a bandwidth burst: 2 x 128 MiB, about 11 ms of copying here (beyond the
// process's share of any real L3).
inline constexpr int64_t kBandwidthBurstBytes = int64_t{128} << 20;

// How fast one core reads 1 MiB another core has just written, against what it wrote itself
// (device::MeasureHandoff, the median of 50 rounds), as one line: "1 MiB another thread just
// wrote reads at 42 GB/s, its own at 108". A kernel that reads another thread's output pays the
// first; on a guest whose host moves its vCPUs between cores that share a cache and cores that
// do not, it moves from one run to the next (docs/performance.md, "The machines").
std::string HandoffSummary();

// The fastest a call of `flops` and `bytes` can run: max(flops / peak, bytes / bandwidth).
double RooflineSeconds(const MachineLimits& limits, double flops, double bytes);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_ROOFLINE_H_
