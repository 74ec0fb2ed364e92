// `pto dump --stage=tensor|tile|block|exec|llvm|asm|STEP (GRAPH.pbtxt --input NAME=FILE.npy ... |
//            --example matmul|mlp|attention|demo) [--checked-kernels]
// STEP: a step of the pipeline, as the pass log names it (jit/pipeline.h).`
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "jit/pipeline.h"
#include "tools/npy.h"
#include "tools/pto/commands.h"
#include "tools/pto/flags.h"
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
  BlockDims dims;
  std::vector<std::vector<int64_t>> block_shapes = {{2, 32, dims.model}};
  for (auto& s : WeightShapes(dims)) block_shapes.push_back(s);
  e["demo"] = {TransformerBlock(dims), block_shapes};
  return e;
}

}  // namespace

int DumpCommand(const std::vector<std::string>& args) {
  Flags flags(args);
  const std::string stage_name = flags.String("stage", "tensor");
  const std::string example = flags.String("example");
  const std::vector<std::string> input_flags = flags.All("input");
  const std::string checked_flag = flags.String("checked-kernels");
  if (!flags.CheckAllUsed("dump") || !flags.ok()) return flags.Fail("dump");
  RuntimeOptions runtime_options;
  runtime_options.checked_kernels =
      !checked_flag.empty() && checked_flag != "false" && checked_flag != "0";
  const std::span<const std::string_view> levels = jit::PipelineLevelNames();
  const std::span<const std::string_view> steps = jit::PipelineStepNames();
  if (std::find(levels.begin(), levels.end(), stage_name) == levels.end() &&
      std::find(steps.begin(), steps.end(), stage_name) == steps.end()) {
    std::fprintf(stderr, "pto dump: unknown --stage=%s (%s)\n", stage_name.c_str(),
                 jit::PipelineStageList().c_str());
    return 2;
  }
  TraceFn trace;
  FunctionOptions options;
  std::vector<std::vector<int64_t>> shapes;
  std::string name;
  if (!example.empty()) {
    auto examples = Examples();
    auto it = examples.find(example);
    if (it == examples.end()) {
      std::fprintf(stderr, "pto dump: unknown --example=%s (matmul, mlp, attention, demo)\n",
                   example.c_str());
      return 2;
    }
    trace = it->second.trace;
    shapes = it->second.shapes;
    name = example;
  } else {
    if (flags.positional().size() != 1) {
      std::fprintf(stderr, "pto dump: expected GRAPH.pbtxt or --example NAME\n");
      return 2;
    }
    absl::StatusOr<GraphProgram> program = LoadGraphProgram(flags.positional()[0]);
    if (!program.ok()) return Error(program.status());
    absl::StatusOr<std::vector<std::string>> files =
        BindNamedFiles(input_flags, program->input_names, "input");
    if (!files.ok()) return Error(files.status());
    for (const std::string& f : *files) {
      absl::StatusOr<NpyArray> a = ReadNpy(f);
      if (!a.ok()) return Error(a.status());
      shapes.push_back(a->shape);
    }
    trace = program->trace;
    options = program->options;
    name = flags.positional()[0];
  }
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(runtime_options);
  if (!rt.ok()) return Error(rt.status());
  absl::StatusOr<std::unique_ptr<Function>> fn =
      (*rt)->JitTraced(name, static_cast<int>(shapes.size()), trace, options);
  if (!fn.ok()) return Error(fn.status());
  absl::StatusOr<std::string> text = (*fn)->Dump(std::string_view(stage_name), shapes);
  if (!text.ok()) return Error(text.status());
  std::fputs(text->c_str(), stdout);
  return 0;
}

}  // namespace pto::tools
