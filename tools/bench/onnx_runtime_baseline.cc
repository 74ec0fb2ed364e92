#include "tools/bench/onnx_runtime_baseline.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/npy.h"

namespace pto::bench {
namespace {

// onnx_export.py's exit status when torch or numpy cannot be imported.
constexpr int kExporterMissing = 3;

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

std::string ShapeJson(const std::vector<int64_t>& shape) {
  return "[" + absl::StrJoin(shape, ", ") + "]";
}

// case.json: the graph, its parameters, the inputs (files, constant or not) and the outputs.
std::string CaseJson(const CaseSpec& spec) {
  std::vector<std::string> inputs, outputs;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const bool constant = std::find(spec.constant_inputs.begin(), spec.constant_inputs.end(),
                                    static_cast<int>(i)) != spec.constant_inputs.end();
    inputs.push_back(absl::StrCat(R"({"name": "in)", i, R"(", "file": "in)", i,
                                  R"(.npy", "constant": )", constant ? "true" : "false", "}"));
  }
  for (size_t o = 0; o < spec.outputs.size(); ++o) {
    outputs.push_back(
        absl::StrCat(R"({"name": "out)", o, R"(", "shape": )", ShapeJson(spec.outputs[o]), "}"));
  }
  return absl::StrCat(R"({"graph": ")", spec.onnx.graph, R"(", "params": )",
                      spec.onnx.params.empty() ? "{}" : spec.onnx.params, R"(, "inputs": [)",
                      absl::StrJoin(inputs, ", "), R"(], "outputs": [)",
                      absl::StrJoin(outputs, ", "), "]}\n");
}

}  // namespace

absl::Status WriteOnnxCase(const CaseSpec& spec, const OperandSets& operands,
                           const std::string& dir) {
  std::ofstream json(dir + "/case.json");
  json << CaseJson(spec);
  if (!json.good()) return absl::InternalError("cannot write " + dir + "/case.json");
  const IoSet& set = operands.sets()[0];
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const std::vector<int64_t>& shape = spec.inputs[i].shape;
    tools::NpyArray array{shape,
                          std::vector<float>(set.inputs[i], set.inputs[i] + Elements(shape))};
    if (absl::Status s = tools::WriteNpy(absl::StrCat(dir, "/in", i, ".npy"), array); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

OnnxRuntimeCommands DefaultOnnxRuntimeCommands() {
  OnnxRuntimeCommands c;
  const std::string scripts = PTO_SOURCE_DIR "/tools/bench/";
  if (std::filesystem::exists("/usr/bin/python3")) {
    c.exporter = "/usr/bin/python3 " + Quoted(scripts + "onnx_export.py");
  }
  c.node = PTO_NODE_PROGRAM;
  c.child = scripts + "ort_child.js";
  c.module_dir = PTO_ONNXRUNTIME_NODE_DIR;
  return c;
}

absl::StatusOr<OnnxRuntimeProcess> StartOnnxRuntime(const CaseSpec& spec,
                                                    const OperandSets& operands, int copies,
                                                    int threads, const TimingOptions& timing,
                                                    const OnnxRuntimeCommands& commands) {
  if (spec.onnx.graph.empty()) return absl::UnimplementedError("no ONNX graph for this case");
  if (commands.node.empty()) return absl::UnavailableError("node (Node.js) not found");
  if (commands.module_dir.empty() ||
      !std::filesystem::exists(commands.module_dir + "/package.json")) {
    return absl::UnavailableError(
        absl::StrCat("onnxruntime-node is not installed at '", commands.module_dir,
                     "' (tools/bench/install_onnxruntime.sh installs it)"));
  }
  if (commands.exporter.empty()) return absl::UnavailableError("/usr/bin/python3 not found");
  std::string dir = (std::filesystem::temp_directory_path() / "pto_bench_onnx_XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) {
    return absl::InternalError("cannot make a directory like " + dir);
  }
  auto fail = [&dir](absl::Status status) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    return status;
  };
  if (absl::Status s = WriteOnnxCase(spec, operands, dir); !s.ok()) return fail(s);
  std::string said;
  const int status = tools::RunCommand(commands.exporter + " --dir " + Quoted(dir), said);
  while (!said.empty() && said.back() == '\n') said.pop_back();
  if (status == kExporterMissing) return fail(absl::UnavailableError(said));
  if (status != 0) return fail(absl::InternalError("onnx_export.py failed: " + said));
  char flags[160];
  std::snprintf(flags, sizeof flags,
                " --threads %d --copies %d --warmup-seconds %g --min-rep-seconds %g", threads,
                copies, timing.warmup_seconds, timing.min_rep_seconds);
  OnnxRuntimeProcess process;
  process.child =
      tools::Child::Start(Quoted(commands.node) + " " + Quoted(commands.child) + " --dir " +
                          Quoted(dir) + " --module " + Quoted(commands.module_dir) + flags);
  if (process.child == nullptr) return fail(absl::InternalError("cannot start node"));
  process.directory = std::move(dir);
  process.exported = said;
  return process;
}

}  // namespace pto::bench
