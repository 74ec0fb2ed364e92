// One row per case and thread count, and the table they print as.
#ifndef PTO_TOOLS_BENCH_TABLE_H_
#define PTO_TOOLS_BENCH_TABLE_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/bench/bench_case.h"

namespace pto::bench {

struct Row {
  std::string group, name;
  bool memory_bound = false;  // rates in GB/s, else GFLOP/s
  TargetClass target = TargetClass::kNone;
  double pto = -1;  // rate; -1 when pto failed
  double baseline[kNumColumns] = {-1, -1, -1, -1, -1};
  std::string baseline_note[kNumColumns];  // why a baseline has no rate: "-", "missing", "error"
  // The rate of ONNX Runtime's own time per call (its profiler's model_run, the least of a few
  // calls at set-up): without the Node binding's copy of every output, which the column's timed
  // calls include. OnnxRuntimeRate takes the faster of the two (-1: none).
  double onnx_runtime_own = -1;
  double roofline_share = -1;  // roofline time / pto time
  // The limit measured in bursts right before and after this case's timing (their median):
  // the fp32 peak in GFLOP/s, or for a memory-bound case the streaming bandwidth in GB/s; and
  // pto's rate over it (-1: not measured).
  double case_limit = -1;
  double case_limit_share = -1;
  double flops = 0, bytes = 0;                   // of one call (the roofline's inputs)
  double pto_seconds = -1;                       // per call, the median
  double pto_spread = -1, baseline_spread = -1;  // the latter: the best baseline's
  double max_rel_error = -1;  // pto vs the first baseline that ran: max|d| / max|ref|
  bool error_failed = false;
  int64_t pto_intermediate_bytes = -1;
  int64_t baseline_intermediate_bytes = -1, fused_intermediate_bytes = -1;  // oneDNN chains
  bool report_memory = false;
  std::vector<std::string> failures;  // printed under the table
  std::vector<std::string> notes;     // what the baselines said of themselves (versions, settings)
};

// The best baseline rate, or -1 when none ran.
double BestBaseline(const Row& row);

// ONNX Runtime's rate: the faster of its timed calls through Node and its own time (-1: none).
double OnnxRuntimeRate(const Row& row);

void PrintTable(std::FILE* out, int threads, const std::vector<Row>& rows);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_TABLE_H_
