// One benchmark case: a tensor program for pto, the same computation for each baseline, and
// what one call costs in FLOPs and compulsory memory traffic (for the roofline).
#ifndef PTO_TOOLS_BENCH_BENCH_CASE_H_
#define PTO_TOOLS_BENCH_BENCH_CASE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pto/pto.h"

namespace pto::bench {

// One copy of a case's operands: inputs in the case's order, then outputs. The bench keeps
// several byte-identical copies and rotates calls through them so that operands do not stay
// in the last-level cache between calls.
struct IoSet {
  std::vector<float*> inputs;
  std::vector<float*> outputs;
};

// A backend made ready for one case and thread count: everything that is set-up (primitive
// creation, weight reorders, compilation) is done; `run(set)` is what gets timed.
struct Prepared {
  std::function<void(int set)> run;
  // Bytes of intermediate buffers the backend needs at its peak (-1: not known).
  int64_t intermediate_bytes = -1;
};

// Makes a backend ready on these operand copies with this many threads. Unavailable when the
// library is missing; Unimplemented when the backend has no such operation.
using BackendFactory =
    std::function<absl::StatusOr<Prepared>(const std::vector<IoSet>& sets, int threads)>;

// The baseline columns of the tables.
// ONNX Runtime runs only in a process of its own (onnx_runtime_baseline.h), from the case's
// ONNX graph: its column has no BackendFactory.
enum class Column { kOnednn = 0, kOnednnFused = 1, kOpenblas = 2, kLibxsmm = 3, kOnnxRuntime = 4 };
inline constexpr int kNumColumns = 5;

// Which of the bench's targets a case is held to (targets.h lists each target's bar).
enum class TargetClass {
  kNone,           // reported, held to no target (batched matmul)
  kLargeMatmul,    // matmul with M >= 128
  kOneRowLinear,   // M = 1
  kFewRowsLinear,  // M = 8 and 32
  kSmallOdd,       // small odd shapes
  kMemoryOp,       // memory-bound op
  kMemoryChain,    // memory-bound chain
  kComputeChain,   // compute-bound chain
  kBlock,          // the demo's transformer block
};

// The case as one of onnx_export.py's graphs, for the ONNX Runtime column.
struct OnnxGraph {
  std::string graph;   // "block", "bias_gelu_residual", ...; empty: no such baseline
  std::string params;  // a JSON object: the graph's sizes and constants
};

struct InputSpec {
  std::vector<int64_t> shape;
  float lo = -1.0f, hi = 1.0f;  // values uniform in [lo, hi)
};

struct CaseSpec {
  std::string group;  // "square matmul", "memory-bound op", ...
  std::string name;   // "matmul 256x256x256"
  std::vector<InputSpec> inputs;
  std::vector<std::vector<int64_t>> outputs;
  double flops = 0;           // useful floating-point operations per call
  double bytes = 0;           // compulsory traffic per call: inputs read once, outputs written once
  bool memory_bound = false;  // reported in GB/s instead of GFLOP/s
  bool quick = false;         // part of the --quick subset
  bool report_memory = false;  // print both sides' peak intermediate memory
  TargetClass target = TargetClass::kNone;
  pto::TraceFn trace;
  std::vector<int> constant_inputs;       // pto: weights, snapshotted at the first call
  BackendFactory baselines[kNumColumns];  // empty function: no such baseline
  OnnxGraph onnx;
};

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_BENCH_CASE_H_
