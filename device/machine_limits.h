// The machine's limits: fp32 peak FLOP/s (an FMA loop with independent vector accumulators,
// compiled for the host's vector width) and streaming memory bandwidth, for a thread count.
// Function::Profile rates kernels against them (the roofline); the bench measures them around
// its cases with longer runs.
#ifndef PTO_DEVICE_MACHINE_LIMITS_H_
#define PTO_DEVICE_MACHINE_LIMITS_H_

#include <cstdint>

#include "device/device_info.h"

namespace pto::device {

struct MachinePeaks {
  double gflops = 0;         // fp32 FMA peak of the threads together
  double bandwidth_gbs = 0;  // read + written bytes per second, STREAM convention
};

// One run of the FMA loop (AVX-512 when the device has it, else AVX2+FMA; SSE2 mul+add
// otherwise), `iterations` on each of `threads` threads released together: its FLOPs over the
// time from the release to the last thread's end (thread start-up excluded).
double PeakBurstGflops(const DeviceInfo& device, int threads, int64_t iterations);
// Best of `passes` bursts of `iterations`.
double MeasurePeakGflops(const DeviceInfo& device, int threads, int64_t iterations, int passes);

// One pass of dst[i] = src[i] * s over n floats split across `threads` threads released
// together, with streaming stores (x86 only; elsewhere ordinary ones), which bypass the caches
// and skip the write-allocate read, or ordinary ones: read + written bytes per second (the
// write-allocate read is not counted, as STREAM does not).
double ScalePassGbs(const float* src, float* dst, int64_t n, int threads, float s,
                    bool streaming_stores);

struct Bandwidth {
  double ordinary_stores_gbs = 0;
  double streaming_stores_gbs = 0;
};
// Best of `passes` passes of each kind of store over two buffers of `buffer_bytes` each,
// first touched by the threads that stream them.
Bandwidth MeasureBandwidth(int threads, int64_t buffer_bytes, int passes);

// How fast one core reads what another core has just written, against reading what it wrote
// itself: two threads take turns over one buffer of `buffer_bytes`, `rounds` times (one writes
// it, the other reads it), then one thread writes and reads it `rounds` times alone. Read bytes
// per second, the median round of each. Both threads spin while they wait, so the scheduler
// keeps them on two cores. A kernel that reads another thread's output pays the first rate: on a
// guest whose host moves its vCPUs between cores that share a cache and cores that do not, it
// changes from one second to the next (docs/performance.md, "The machines").
struct HandoffRates {
  double other_thread_gbs = 0;
  double same_thread_gbs = 0;
};
HandoffRates MeasureHandoff(int64_t buffer_bytes, int rounds);

// A short measurement of both peaks (about 0.2 s at 2 threads here: FMA bursts of about
// 10 ms, copies of 64 MiB buffers), done once per process and thread count and kept: the
// first caller measures, later ones (and concurrent ones, who wait) get the same figures.
MachinePeaks MeasuredPeaks(const DeviceInfo& device, int threads);

}  // namespace pto::device

#endif  // PTO_DEVICE_MACHINE_LIMITS_H_
