// The kernel bench's ONNX Runtime column: a case's graph exported to ONNX with the case's own
// operands (onnx_export.py: PyTorch's exporter, from Debian's python3-torch; the constant inputs
// become initializers) and run by ONNX Runtime through its Node.js binding (ort_child.js, npm's
// onnxruntime-node, installed by tools/bench/install_onnxruntime.sh) in a process of its own
// that speaks pto_bench_baseline's protocol (baseline_child.cc).
#ifndef PTO_TOOLS_BENCH_ONNX_RUNTIME_BASELINE_H_
#define PTO_TOOLS_BENCH_ONNX_RUNTIME_BASELINE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tools/bench/bench_case.h"
#include "tools/bench/buffers.h"
#include "tools/bench/timing.h"
#include "tools/subprocess.h"

namespace pto::bench {

// Where the column's programs are. Empty fields: not installed.
struct OnnxRuntimeCommands {
  std::string exporter;    // shell command prefix that runs onnx_export.py
  std::string node;        // the node program
  std::string child;       // ort_child.js
  std::string module_dir;  // the onnxruntime-node package's directory
};

// This build's: Debian's /usr/bin/python3, and node, the scripts and the package where CMake
// found or put them (PTO_ONNXRUNTIME_NODE_DIR).
OnnxRuntimeCommands DefaultOnnxRuntimeCommands();

// A started ONNX Runtime process and the directory it reads its case from (the caller removes
// it once the process said READY or failed).
struct OnnxRuntimeProcess {
  std::unique_ptr<tools::Child> child;
  std::string directory;
  std::string exported;  // what the exporter said it made (torch version, opset, variant)
};

// Writes what onnx_export.py reads to `dir`: case.json (the graph, its parameters, the inputs
// with their files and constness, the output shapes) and copy 0's inputs as in<i>.npy.
absl::Status WriteOnnxCase(const CaseSpec& spec, const OperandSets& operands,
                           const std::string& dir);

// Writes the case (case.json) and copy 0's inputs (.npy) to a fresh directory, exports the
// graph there and starts ort_child.js on it with `copies` copies of the inputs that are not
// constant. Unavailable (saying what) when node, the package, python3 or torch is missing;
// Unimplemented when the case has no ONNX graph; Internal when the export fails.
absl::StatusOr<OnnxRuntimeProcess> StartOnnxRuntime(const CaseSpec& spec,
                                                    const OperandSets& operands, int copies,
                                                    int threads, const TimingOptions& timing,
                                                    const OnnxRuntimeCommands& commands);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_ONNX_RUNTIME_BASELINE_H_
