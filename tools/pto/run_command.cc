// `pto run GRAPH.pbtxt --input NAME=FILE.npy ... --output NAME=FILE.npy ... [--threads N]
// [--check-numerics]`
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tools/npy.h"
#include "tools/pto/command_line.h"
#include "tools/pto/commands.h"
#include "tools/pto/graph_program.h"

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
  for (const NpyArray& a : inputs) views.push_back(TensorView::Dense(a.data.data(), a.shape));
  absl::StatusOr<RuntimeOptions> options = RuntimeOptions::FromEnvironment();
  if (!options.ok()) return Error(options.status());
  options->intra_op_threads = o.threads;
  options->check_numerics |= o.check_numerics;
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(*options);
  if (!rt.ok()) return Error(rt.status());
  absl::StatusOr<std::unique_ptr<Function>> fn =
      (*rt)->JitTraced(o.graph_path, program->graph.num_inputs, program->trace, program->options);
  if (!fn.ok()) return Error(fn.status());
  absl::StatusOr<std::vector<Tensor>> outputs = (**fn)(views);
  if (!outputs.ok()) return Error(outputs.status());
  for (size_t out = 0; out < outputs->size(); ++out) {
    const Tensor& t = (*outputs)[out];
    NpyArray a;
    a.shape.assign(t.dims().begin(), t.dims().end());
    a.data.assign(t.data(), t.data() + t.num_elements());
    if (absl::Status s = WriteNpy((*out_files)[out], a); !s.ok()) return Error(s);
  }
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
      "outputs by name. Exit codes: 0 done, 1 failed, 2 a usage error.");
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
  run->add_flag("--check-numerics", o->check_numerics,
                "fail at the first NaN or infinity, naming the input or the kernel and op that "
                "made it (RuntimeOptions::check_numerics)");
}

}  // namespace pto::tools
