// `pto run GRAPH.pbtxt --input NAME=FILE.npy ... --output NAME=FILE.npy ...`
#include <cstdio>
#include <string>
#include <vector>

#include "tools/npy.h"
#include "tools/pto/commands.h"
#include "tools/pto/flags.h"
#include "tools/pto/graph_program.h"

namespace pto::tools {
namespace {

int Error(const absl::Status& s) {
  std::fprintf(stderr, "pto run: %s\n", std::string(s.message()).c_str());
  return 1;
}

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
  Flags flags(args);
  const std::vector<std::string> input_flags = flags.All("input");
  const std::vector<std::string> output_flags = flags.All("output");
  const int64_t threads = flags.Int("threads", 0);
  if (!flags.CheckAllUsed("run") || !flags.ok()) return flags.Fail("run");
  if (flags.positional().size() != 1) {
    std::fprintf(stderr, "pto run: expected one GRAPH.pbtxt, got %zu positional arguments\n",
                 flags.positional().size());
    return 2;
  }
  absl::StatusOr<GraphProgram> program = LoadGraphProgram(flags.positional()[0]);
  if (!program.ok()) return Error(program.status());
  absl::StatusOr<std::vector<std::string>> in_files = BindNamedFiles(input_flags, program->input_names, "input");
  if (!in_files.ok()) return Error(in_files.status());
  absl::StatusOr<std::vector<std::string>> out_files = BindNamedFiles(output_flags, program->output_names, "output");
  if (!out_files.ok()) return Error(out_files.status());
  std::vector<NpyArray> inputs;
  std::vector<TensorView> views;
  for (const std::string& file : *in_files) {
    absl::StatusOr<NpyArray> a = ReadNpy(file);
    if (!a.ok()) return Error(a.status());
    inputs.push_back(*std::move(a));
  }
  for (const NpyArray& a : inputs) views.push_back(TensorView::Dense(a.data.data(), a.shape));
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open({.intra_op_threads = static_cast<int>(threads)});
  if (!rt.ok()) return Error(rt.status());
  absl::StatusOr<std::unique_ptr<Function>> fn =
      (*rt)->JitTraced(flags.positional()[0], program->graph.num_inputs, program->trace, program->options);
  if (!fn.ok()) return Error(fn.status());
  absl::StatusOr<std::vector<Tensor>> outputs = (**fn)(views);
  if (!outputs.ok()) return Error(outputs.status());
  for (size_t o = 0; o < outputs->size(); ++o) {
    const Tensor& t = (*outputs)[o];
    NpyArray a;
    a.shape.assign(t.dims().begin(), t.dims().end());
    a.data.assign(t.data(), t.data() + t.num_elements());
    if (absl::Status s = WriteNpy((*out_files)[o], a); !s.ok()) return Error(s);
  }
  return 0;
}

}  // namespace pto::tools
