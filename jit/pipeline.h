// The pipeline for one shape class, levels 1 to 5, as one sequence of named steps (the model
// is Halide's Lower.cpp): a reader of pipeline.cc sees the whole lowering.
//   tensor (level 1)  specialize_shapes canonicalize cse split_matmul_columns dce
//   tile   (level 2)  fusion_groups build_tile_graph
//   block  (level 3)  choose_tile_configs prepack_constant_weights read_short_rows_in_place
//   exec   (level 4)  plan_in_place_outputs mark_in_place plan_buffers attach_buffer_extents check_plan_limits
//   code   (level 5)  apply_tuning_records compile_kernels bind_plan
// Every step is timed (LoweredProgram::steps). With PipelineOptions::log_passes each logs, at
// kDebug, "after STEP (T ms):" and the program it leaves, the text `pto dump --stage=STEP`
// prints (PrintAfter).
#ifndef PTO_JIT_PIPELINE_H_
#define PTO_JIT_PIPELINE_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "device/device_info.h"
#include "device/thread_arena.h"
#include "jit/ir/graph.h"
#include "jit/ir/tile_graph.h"
#include "jit/kernel_compiler.h"
#include "jit/logger.h"
#include "jit/passes/fusion_groups.h"
#include "jit/passes/plan_buffers.h"
#include "jit/plan.h"
#include "jit/shape_class.h"
#include "jit/tuning/apply_tuning_records.h"
#include "pto/options.h"

namespace pto::jit {

struct StepTime {
  std::string step;
  double seconds = 0;
};

struct LoweredProgram {
  ir::Graph graph;  // level 1 after the graph passes, specialized to the class
  FusionGroups groups;
  ir::TileGraph tiles;  // levels 2 and 3
  BufferPlan buffers;   // level 4
  std::vector<SymbolSource> symbol_sources;
  std::vector<StepTime> steps;  // the steps run so far, in order
};

struct PipelineOptions {
  const device::DeviceInfo* device = nullptr;
  const Logger* logger = nullptr;
  bool log_passes = false;
  // Per input: its contents are constant (FunctionOptions::constant_inputs), so matmuls may
  // read it prepacked (prepack_constant_weights).
  std::vector<bool> constant_inputs;
  // How large fusion groups may grow (the policy's defaults; tests vary them).
  FusionOptions fusion;
  // Outputs that may be written over inputs (FunctionOptions::in_place_outputs).
  std::vector<InPlaceOutput> in_place_outputs;
};

// Level 5's options.
struct BuildPlanOptions {
  // Goes into the kernels' cache records and timing events.
  KernelOrigin origin;
  // False: kernels compiled here are not written to the cache (tuning candidates).
  bool persist = true;
  // Compiles the kernels in parallel on this arena (each compile is single-threaded LLVM work:
  // a plan of many kernels is ready sooner). Null: one after the other.
  device::ThreadArena* threads = nullptr;
};

struct BuiltPlan {
  std::unique_ptr<Plan> plan;
  std::vector<std::string> kernel_keys;  // each kernel's cache key, in plan order
  int64_t kernels_compiled = 0;          // LLVM code generation runs (not cache loads)
};

// A shape class compiled by the whole pipeline.
struct CompiledProgram {
  LoweredProgram program;                       // with the configs the plan was built with
  std::vector<ir::TileConfig> default_configs;  // per kernel, before tuning records
  AppliedTuning tuning;
  BuiltPlan built;
};

// Levels 1-4: no code generation.
absl::StatusOr<LoweredProgram> Lower(const ir::Graph& traced, const ShapeClass& cls,
                                     const PipelineOptions& options);

// Level 5 alone: compiles (or loads) every kernel of `program` and binds the Plan. Not logged
// (the tuner builds a plan per candidate).
absl::StatusOr<BuiltPlan> BuildPlan(const LoweredProgram& program, KernelCompiler& compiler,
                                    const BuildPlanOptions& options = {});

// The whole pipeline: Lower, the cache's tuned configs (`records`), then level 5.
absl::StatusOr<CompiledProgram> CompileShapeClass(const ir::Graph& traced, const ShapeClass& cls,
                                                  const PipelineOptions& options,
                                                  const TuningRecordSource& records,
                                                  KernelCompiler& compiler,
                                                  const BuildPlanOptions& build);

// The step names in order, and the levels (tensor, tile, block, exec, llvm, asm) PrintAfter
// takes besides them.
std::span<const std::string_view> PipelineStepNames();
std::span<const std::string_view> PipelineLevelNames();
// "a level (tensor, ...) or a step (specialize_shapes, ...)", for messages.
std::string PipelineStageList();

// What the pipeline leaves after step or level `stage`, running it only that far: a step's
// text as log_passes logs it; a level's as `pto dump --stage=LEVEL` prints it (block: the
// schedule of each kernel for `threads` threads; llvm and asm: every kernel's code). Steps of
// level 5 compile without writing to the cache. InvalidArgument for an unknown name.
absl::StatusOr<std::string> PrintAfter(std::string_view stage, const ir::Graph& traced,
                                       const ShapeClass& cls, const PipelineOptions& options,
                                       const TuningRecordSource& records, KernelCompiler& compiler,
                                       int threads);

}  // namespace pto::jit

#endif  // PTO_JIT_PIPELINE_H_
