// `pto run GRAPH.pbtxt --input NAME=FILE.npy ... --output NAME=FILE.npy ... [--threads N]
//  [--check] [--check-numerics] [--trace FILE]`
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tools/npy.h"
#include "tools/pto/command_line.h"
#include "tools/pto/commands.h"
#include "tools/pto/graph_input_check.h"
#include "tools/pto/graph_program.h"
#include "tools/pto/node_check.h"
#include "tools/pto/trace_file.h"

namespace pto::tools {
namespace {

int Error(const absl::Status& s) {
  std::fprintf(stderr, "pto run: %s\n", std::string(s.message()).c_str());
  return 1;
}

struct RunOptions {
  std::string graph_path;
  std::vector<std::string> inputs, outputs;  // NAME=FILE.npy
  int threads = 0;
  bool check = false;           // every node against the ops/ reference (tools/pto/node_check.h)
  std::string trace_path;       // --trace FILE
  bool check_numerics = false;  // or PTO_CHECK_NUMERICS
};

int RunGraph(const CLI::App& command, const RunOptions& o) {
  if (o.graph_path.empty()) return UsageError(command, "expected GRAPH.pbtxt");
  absl::StatusOr<GraphProgram> program = LoadGraphProgram(o.graph_path);
  if (!program.ok()) return Error(program.status());
  absl::StatusOr<std::vector<std::string>> in_files =
      BindNamedFiles(o.inputs, program->input_names, "input");
  if (!in_files.ok()) return Error(in_files.status());
  absl::StatusOr<std::vector<std::string>> out_files =
      BindNamedFiles(o.outputs, program->output_names, "output");
  if (!out_files.ok()) return Error(out_files.status());
  std::vector<NpyArray> inputs;
  std::vector<TensorView> views;
  for (const std::string& file : *in_files) {
    absl::StatusOr<NpyArray> a = ReadNpy(file);
    if (!a.ok()) return Error(a.status());
    inputs.push_back(*std::move(a));
  }
  std::vector<GivenInput> given;
  for (const NpyArray& a : inputs) given.push_back({a.shape, a.dtype});
  if (absl::Status s = CheckGraphInputs(program->graph, program->input_names, given); !s.ok()) {
    return Error(s);
  }
  // An i32 input (declared i32, so checked above) is passed as int32 elements.
  std::vector<std::vector<int32_t>> ints(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NpyArray& a = inputs[i];
    views.push_back(TensorView::Dense(a.data.data(), a.shape));
    if (a.dtype == ir::DType::kI32) {
      ints[i] = a.I32Values();
      views.back().data = ints[i].data();
      views.back().dtype = DType::kI32;
    }
  }
  absl::StatusOr<RuntimeOptions> options = RuntimeOptions::FromEnvironment();
  if (!options.ok()) return Error(options.status());
  options->intra_op_threads = o.threads;
  options->check_numerics |= o.check_numerics;
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(*options);
  if (!rt.ok()) return Error(rt.status());
  absl::StatusOr<std::unique_ptr<Function>> fn =
      (*rt)->JitTraced(o.graph_path, program->graph.num_inputs, program->trace, program->options);
  if (!fn.ok()) return Error(fn.status());
  if (!o.trace_path.empty()) {
    if (absl::Status s = (*rt)->StartTrace(o.trace_path); !s.ok()) return Error(s);
  }
  absl::StatusOr<std::vector<Tensor>> outputs = (**fn)(views);
  if (!outputs.ok()) return Error(outputs.status());
  if (!o.trace_path.empty()) {
    if (absl::Status s = FinishTrace(**rt); !s.ok()) return Error(s);
  }
  for (size_t out = 0; out < outputs->size(); ++out) {
    const Tensor& t = (*outputs)[out];
    NpyArray a;
    a.shape.assign(t.dims().begin(), t.dims().end());
    if (t.view().dtype == DType::kI32) {  // an '<i4' file
      const int32_t* v = static_cast<const int32_t*>(t.view().data);
      a.dtype = ir::DType::kI32;
      a.wide.assign(v, v + t.num_elements());
    } else {
      const float* v = static_cast<const float*>(t.view().data);
      a.data.assign(v, v + t.num_elements());
    }
    if (absl::Status s = WriteNpy((*out_files)[out], a); !s.ok()) return Error(s);
  }
  if (o.check) return RunNodeCheck(**rt, *program, o.graph_path, inputs);
  return 0;
}

}  // namespace

void AddRunCommand(CommandLine& cli) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* run =
      cli.AddCommand(cli.root(), "run", "run a GraphDef on .npy inputs, writing .npy outputs",
                     [o](const CLI::App& command) { return RunGraph(command, *o); });
  run->footer(
      "Inputs and outputs are NumPy .npy files (<f4, C order), bound to the graph's inputs and\n"
      "outputs by name; each input must have the rank and dims the graph declares. Exit codes:\n"
      "0 done, 1 failed (or --check found a node outside its tolerance), 2 a usage error.");
  run->add_option("GRAPH.pbtxt", o->graph_path,
                  "a pto.proto.GraphDef in protobuf text format (proto/graph.proto)")
      ->type_name("");
  AddRepeatedOption(*run, "--input", o->inputs, "the .npy file of the graph's input NAME")
      ->type_name("NAME=FILE.npy");
  AddRepeatedOption(*run, "--output", o->outputs, "where the graph's output NAME goes")
      ->type_name("NAME=FILE.npy");
  run->add_option("--threads", o->threads,
                  "threads the call runs on (default 0: all the process may use)")
      ->type_name("N");
  run->add_flag("--check", o->check,
                "also run a debug plan that materializes every node and print, per node, its "
                "error against the ops/ reference and the op's tolerance");
  run->add_option("--trace", o->trace_path,
                  "write a Chrome trace of the call (its kernels per thread, compiles);\n"
                  "open it at ui.perfetto.dev or chrome://tracing")
      ->type_name("FILE");
  run->add_flag("--check-numerics", o->check_numerics,
                "fail at the first NaN or infinity, naming the input or the kernel and op that "
                "made it (RuntimeOptions::check_numerics)");
}

}  // namespace pto::tools
