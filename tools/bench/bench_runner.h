// Runs one case at one thread count: pto and each baseline on the same rotated operands, timed
// the same way, outputs compared.
#ifndef PTO_TOOLS_BENCH_BENCH_RUNNER_H_
#define PTO_TOOLS_BENCH_BENCH_RUNNER_H_

#include <cstdint>
#include <string>

#include "device/device_info.h"
#include "pto/pto.h"
#include "tools/bench/bench_case.h"
#include "tools/bench/onnx_runtime_baseline.h"
#include "tools/bench/roofline.h"
#include "tools/bench/table.h"
#include "tools/bench/timing.h"

namespace pto::bench {

struct RunOptions {
  int threads = 1;
  // Operands are copied until the copies exceed this many bytes (so the rotation leaves the
  // last-level cache), up to max_copies.
  int64_t rotate_bytes = 64 << 20;
  int max_copies = 256;
  TimingOptions timing;
  // pto's output counts as wrong above this normwise relative error against the baseline.
  double tolerance = 1e-3;
  // When set, a compute-bound case also times FMA bursts (PeakBurstGflops) before and after
  // its backends, and a memory-bound one bandwidth bursts, for Row::case_limit.
  const device::DeviceInfo* device = nullptr;
  BandwidthBurst* bandwidth = nullptr;
  // The shell command prefix that runs pto_bench_baseline (baseline_child.cc), environment
  // settings included: each baseline then runs in a process of its own with its library's
  // default threading, asked for one repetition at a time between pto's. Empty: the baselines
  // run in this process, interleaved with pto.
  std::string baseline_command;
  // The ONNX Runtime column's programs (always a process of its own).
  OnnxRuntimeCommands onnx_runtime;
};

// `runtime` must have been opened with intra_op_threads = options.threads. The row's
// roofline_share is left to the caller (the limits are measured after all the cases too).
Row RunCase(const CaseSpec& spec, Runtime& runtime, const RunOptions& options);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_BENCH_RUNNER_H_
