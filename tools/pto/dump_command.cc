// `pto dump --stage=tensor|tile|block|exec|llvm|asm|STEP (GRAPH.pbtxt --input NAME=FILE.npy ... |
//            --example matmul|mlp|attention|sgd|demo) [--in-place OUTPUT=INPUT ...]
//           [--checked-kernels]`
// STEP: a step of the pipeline, as the pass log names it (jit/pipeline.h).
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "jit/pipeline.h"
#include "tools/npy.h"
#include "tools/pto/command_line.h"
#include "tools/pto/commands.h"
#include "tools/pto/graph_program.h"
#include "tools/pto/transformer_block.h"

namespace pto::tools {
namespace {

int Error(const absl::Status& s) {
  std::fprintf(stderr, "pto dump: %s\n", std::string(s.message()).c_str());
  return 1;
}

struct Example {
  TraceFn trace;
  std::vector<std::vector<int64_t>> shapes;
};

std::map<std::string, Example> Examples() {
  std::map<std::string, Example> e;
  e["matmul"] = {[](std::span<const Value> v) { return std::vector<Value>{matmul(v[0], v[1])}; },
                 {{64, 128}, {128, 96}}};
  e["mlp"] = {
      [](std::span<const Value> v) {
        return std::vector<Value>{linear(gelu(linear(v[0], v[1], v[2])), v[3], v[4]) + v[0]};
      },
      {{32, 64}, {256, 64}, {256}, {64, 256}, {64}}};
  e["attention"] = {[](std::span<const Value> v) {
                      return std::vector<Value>{matmul(
                          softmax(matmul(v[0], v[1], {.transpose_b = true}) * 0.125f), v[2])};
                    },
                    {{4, 32, 64}, {4, 32, 64}, {4, 32, 64}}};
  e["sgd"] = {[](std::span<const Value> v) { return std::vector<Value>{v[0] - v[1] * 0.01f}; },
              {{256, 64}, {256, 64}}};
  BlockDims dims;
  std::vector<std::vector<int64_t>> block_shapes = {{2, 32, dims.model}};
  for (auto& s : WeightShapes(dims)) block_shapes.push_back(s);
  e["demo"] = {TransformerBlock(dims), block_shapes};
  return e;
}

struct DumpOptions {
  std::string stage = "tensor";
  std::string example;                // --example NAME, else graph_path
  std::string graph_path;             // GRAPH.pbtxt
  std::vector<std::string> inputs;    // --input NAME=FILE.npy
  std::vector<std::string> in_place;  // --in-place OUTPUT=INPUT
  RuntimeOptions runtime;
};

// "OUTPUT=INPUT" as FunctionOptions::in_place_outputs takes it; nullopt when malformed.
std::optional<InPlaceOutput> ParseInPlace(const std::string& text) {
  const size_t eq = text.find('=');
  InPlaceOutput pair;
  if (eq == std::string::npos || !absl::SimpleAtoi(text.substr(0, eq), &pair.output) ||
      !absl::SimpleAtoi(text.substr(eq + 1), &pair.input)) {
    return std::nullopt;
  }
  return pair;
}

// What to dump: a traced program, its options and the shapes of its inputs.
struct DumpTarget {
  std::string name;
  TraceFn trace;
  FunctionOptions options;
  std::vector<std::vector<int64_t>> shapes;
};

// The GraphDef at o.graph_path with the shapes of the .npy files bound to its inputs.
absl::StatusOr<DumpTarget> GraphTarget(const DumpOptions& o) {
  absl::StatusOr<GraphProgram> program = LoadGraphProgram(o.graph_path);
  if (!program.ok()) return program.status();
  absl::StatusOr<std::vector<std::string>> files =
      BindNamedFiles(o.inputs, program->input_names, "input");
  if (!files.ok()) return files.status();
  DumpTarget target{o.graph_path, program->trace, program->options, {}};
  for (const std::string& f : *files) {
    absl::StatusOr<NpyArray> a = ReadNpy(f);
    if (!a.ok()) return a.status();
    target.shapes.push_back(a->shape);
  }
  return target;
}

int RunDump(const CLI::App& command, const DumpOptions& o) {
  const std::span<const std::string_view> levels = jit::PipelineLevelNames();
  const std::span<const std::string_view> steps = jit::PipelineStepNames();
  if (std::find(levels.begin(), levels.end(), o.stage) == levels.end() &&
      std::find(steps.begin(), steps.end(), o.stage) == steps.end()) {
    return UsageError(command,
                      "unknown --stage=" + o.stage + " (" + jit::PipelineStageList() + ")");
  }
  DumpTarget target;
  if (!o.example.empty()) {
    auto examples = Examples();
    auto it = examples.find(o.example);
    if (it == examples.end()) {
      return UsageError(command,
                        "unknown --example=" + o.example + " (matmul, mlp, attention, sgd, demo)");
    }
    target = {o.example, it->second.trace, {}, it->second.shapes};
  } else if (o.graph_path.empty()) {
    return UsageError(command, "expected GRAPH.pbtxt or --example NAME");
  } else {
    absl::StatusOr<DumpTarget> graph = GraphTarget(o);
    if (!graph.ok()) return Error(graph.status());
    target = *std::move(graph);
  }
  for (const std::string& text : o.in_place) {
    std::optional<InPlaceOutput> pair = ParseInPlace(text);
    if (!pair.has_value()) {
      return UsageError(command, "--in-place takes OUTPUT=INPUT (two indices), got " + text);
    }
    target.options.in_place_outputs.push_back(*pair);
  }
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(o.runtime);
  if (!rt.ok()) return Error(rt.status());
  absl::StatusOr<std::unique_ptr<Function>> fn = (*rt)->JitTraced(
      target.name, static_cast<int>(target.shapes.size()), target.trace, target.options);
  if (!fn.ok()) return Error(fn.status());
  absl::StatusOr<std::string> text = (*fn)->Dump(std::string_view(o.stage), target.shapes);
  if (!text.ok()) return Error(text.status());
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace

void AddDumpCommand(CommandLine& cli) {
  auto o = std::make_shared<DumpOptions>();
  CLI::App* dump = cli.AddCommand(
      cli.root(), "dump", "print one level of the pipeline for a GraphDef or a built-in example",
      [o](const CLI::App& command) { return RunDump(command, *o); });
  dump->footer(
      "Prints a level of the pipeline, or what one step of it leaves, for GRAPH.pbtxt at the\n"
      "shapes of its --input files, or for --example NAME. Exit codes: 0 printed, 1 failed,\n"
      "2 a usage error.");
  dump->add_option("GRAPH.pbtxt", o->graph_path,
                   "a pto.proto.GraphDef in protobuf text format (proto/graph.proto)")
      ->type_name("");
  dump->add_option("--stage", o->stage,
                   "tensor, tile, block, exec, llvm or asm (default tensor), or a\n"
                   "step of the pipeline as the pass log names it (jit/pipeline.h)")
      ->type_name("STAGE");
  dump->add_option("--example", o->example,
                   "a built-in program instead of GRAPH.pbtxt: matmul, mlp, attention,\n"
                   "sgd (p - 0.01 * g) or demo (the block of `pto demo`)")
      ->type_name("NAME");
  AddRepeatedOption(*dump, "--input", o->inputs,
                    "the .npy file whose shape the graph's input NAME takes (one per\n"
                    "input)")
      ->type_name("NAME=FILE.npy");
  AddRepeatedOption(*dump, "--in-place", o->in_place,
                    "output OUTPUT may be written over input INPUT's buffer\n"
                    "(FunctionOptions::in_place_outputs; exec shows how it is written)")
      ->type_name("OUTPUT=INPUT");
  dump->add_flag("--checked-kernels", o->runtime.checked_kernels,
                 "bounds-checked kernels (RuntimeOptions::checked_kernels)");
}

}  // namespace pto::tools
