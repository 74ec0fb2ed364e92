#include "jit/pipeline.h"

#include <algorithm>
#include <chrono>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "jit/codegen/emit_kernel.h"
#include "jit/passes/attach_buffer_extents.h"
#include "jit/passes/build_tile_graph.h"
#include "jit/passes/canonicalize.h"
#include "jit/passes/choose_tile_configs.h"
#include "jit/passes/cse.h"
#include "jit/passes/dce.h"
#include "jit/passes/mark_in_place.h"
#include "jit/passes/plan_in_place_outputs.h"
#include "jit/passes/prepack_constant_weights.h"
#include "jit/passes/read_short_rows_in_place.h"
#include "jit/passes/specialize_shapes.h"
#include "jit/passes/split_matmul_columns.h"
#include "jit/pipeline_text.h"

namespace pto::jit {
namespace {

constexpr std::string_view kSteps[] = {"specialize_shapes",
                                       "canonicalize",
                                       "cse",
                                       "split_matmul_columns",
                                       "dce",
                                       "fusion_groups",
                                       "build_tile_graph",
                                       "choose_tile_configs",
                                       "prepack_constant_weights",
                                       "read_short_rows_in_place",
                                       "plan_in_place_outputs",
                                       "mark_in_place",
                                       "plan_buffers",
                                       "attach_buffer_extents",
                                       "check_plan_limits",
                                       "apply_tuning_records",
                                       "compile_kernels",
                                       "bind_plan"};
// What `pto dump --stage` takes besides the step names: each prints the whole lowered program
// (levels 1-4) in one form.
constexpr std::string_view kLevelNames[] = {"tensor", "tile", "block", "exec", "llvm", "asm"};

// Runs the steps: times each, logs it, and after step `stop_after` skips every later one,
// keeping the text that step left.
class Steps {
 public:
  Steps(const PipelineOptions& options, std::vector<StepTime>* times,
        std::string_view stop_after = {})
      : options_(options), times_(times), stop_after_(stop_after) {}

  // A step that cannot fail. `text` prints what it left (called only when needed).
  template <typename Step, typename Text>
  void Do(std::string_view name, Step&& step, Text&& text) {
    Try(
        name,
        [&] {
          step();
          return absl::OkStatus();
        },
        text)
        .IgnoreError();
  }
  // A step that returns absl::Status.
  template <typename Step, typename Text>
  absl::Status Try(std::string_view name, Step&& step, Text&& text) {
    if (stopped_) return absl::OkStatus();
    const auto start = std::chrono::steady_clock::now();
    absl::Status status = step();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    times_->push_back({std::string(name), seconds});
    if (!status.ok()) return status;
    const bool log = options_.log_passes && options_.logger != nullptr &&
                     options_.logger->Enabled(LogLevel::kDebug);
    const bool stop = name == stop_after_;
    if (!log && !stop) return absl::OkStatus();
    std::string printed = text();
    if (log) {
      options_.logger->Log(
          LogLevel::kDebug,
          absl::StrFormat("after %s (%.3f ms):\n%s", std::string(name), seconds * 1e3, printed));
    }
    if (stop) {
      stopped_ = true;
      stopped_text_ = std::move(printed);
    }
    return absl::OkStatus();
  }
  bool stopped() const { return stopped_; }
  const std::string& stopped_text() const { return stopped_text_; }

 private:
  const PipelineOptions& options_;
  std::vector<StepTime>* times_;
  std::string_view stop_after_;
  bool stopped_ = false;
  std::string stopped_text_;
};

// Program sizes Plan::Run serves (jit/plan.h).
absl::Status CheckPlanLimits(const LoweredProgram& p) {
  if (p.symbol_sources.size() > static_cast<size_t>(kMaxSymbols)) {
    return absl::InvalidArgumentError(absl::StrCat("the program uses ", p.symbol_sources.size(),
                                                   " symbols; at most ", kMaxSymbols,
                                                   " are supported"));
  }
  if (p.buffers.slot_members.size() > static_cast<size_t>(kMaxArenaSlots)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the program needs more than ", kMaxArenaSlots,
        " intermediate buffers at once (kMaxArenaSlots); fewer values may be live at one time"));
  }
  for (const ir::KernelCall& call : p.tiles.calls) {
    if (call.buffers.size() > static_cast<size_t>(kMaxKernelBuffers)) {
      return absl::InvalidArgumentError(absl::StrCat("kernel ", call.kernel.name, " reads ",
                                                     call.buffers.size(), " buffers; at most ",
                                                     kMaxKernelBuffers, " are supported"));
    }
  }
  return absl::OkStatus();
}

// One kDebug line per output declared in place: written in place or copied, and why.
void LogInPlaceOutputs(const ir::TileGraph& tiles, const Logger* logger) {
  if (logger == nullptr || !logger->Enabled(LogLevel::kDebug)) return;
  for (const ir::InPlaceOutputPlan& d : tiles.in_place_outputs) {
    logger->Log(LogLevel::kDebug, absl::StrCat("pto: ", InPlaceOutputText(d)));
  }
}

// Levels 1 to 4.
absl::Status LowerSteps(const ir::Graph& traced, const ShapeClass& cls,
                        const PipelineOptions& options, Steps& steps, LoweredProgram& p) {
  auto graph_text = [&p] { return p.graph.ToString(); };
  auto tile_text = [&p] { return p.tiles.ToString(); };
  auto exec_text = [&p] { return ExecutionText(p.tiles, p.buffers); };
  // Level 1: the tensor graph, specialized to the shape class.
  p.graph = traced;
  steps.Do(
      "specialize_shapes",
      [&] {
        Specialization sp = Specialize(cls, traced.symbols);
        SpecializeShapes(p.graph, sp.replacement);
        p.graph.symbols = sp.symbols;
        p.symbol_sources = sp.sources;
      },
      graph_text);
  steps.Do(
      "canonicalize", [&] { Canonicalize(p.graph); }, graph_text);
  steps.Do(
      "cse", [&] { EliminateCommonSubexpressions(p.graph); }, graph_text);
  steps.Do(
      "split_matmul_columns", [&] { SplitMatMulColumns(p.graph); }, graph_text);
  steps.Do(
      "dce", [&] { EliminateDeadCode(p.graph); }, graph_text);
  // Level 2: fusion groups and tile kernels.
  steps.Do(
      "fusion_groups", [&] { p.groups = FormFusionGroups(p.graph, options.fusion); },
      [&p] { return FusionGroupsText(p.graph, p.groups); });
  if (absl::Status s = steps.Try(
          "build_tile_graph",
          [&]() -> absl::Status {
            absl::StatusOr<ir::TileGraph> tiles = BuildTileGraph(p.graph, p.groups);
            if (!tiles.ok()) return tiles.status();
            p.tiles = *std::move(tiles);
            return absl::OkStatus();
          },
          tile_text);
      !s.ok()) {
    return s;
  }
  // Level 3: each kernel's tile config and block schedule.
  steps.Do(
      "choose_tile_configs",
      [&] { ChooseTileConfigs(p.tiles, *options.device, options.constant_inputs); }, tile_text);
  steps.Do(
      "prepack_constant_weights",
      [&] {
        PrepackConstantWeights(p.tiles, options.constant_inputs, options.device->f32_lanes());
      },
      tile_text);
  steps.Do(
      "read_short_rows_in_place", [&] { ReadShortRowsOfBInPlace(p.tiles); }, tile_text);
  // Level 4: the execution graph.
  if (absl::Status s = steps.Try(
          "plan_in_place_outputs",
          [&]() -> absl::Status {
            absl::Status planned =
                PlanInPlaceOutputs(p.graph, options.in_place_outputs, *options.device, p.tiles);
            if (planned.ok()) LogInPlaceOutputs(p.tiles, options.logger);
            return planned;
          },
          [&p] { return p.tiles.ToString() + InPlaceOutputsText(p.tiles); });
      !s.ok()) {
    return s;
  }
  steps.Do(
      "mark_in_place", [&] { MarkInPlace(p.tiles); }, tile_text);
  steps.Do(
      "plan_buffers", [&] { p.buffers = PlanBuffers(p.tiles); }, exec_text);
  steps.Do(
      "attach_buffer_extents", [&] { AttachBufferExtents(p.tiles); }, exec_text);
  return steps.Try(
      "check_plan_limits", [&] { return CheckPlanLimits(p); }, exec_text);
}

using CompiledKernels = std::vector<std::shared_ptr<const CompiledKernel>>;

// Level 5, first half: every kernel compiled or loaded (in parallel on `options.threads`).
absl::Status CompileKernels(const LoweredProgram& program, KernelCompiler& compiler,
                            const BuildPlanOptions& options, CompiledKernels& kernels,
                            int64_t& codegen_runs) {
  const std::vector<ir::KernelCall>& calls = program.tiles.calls;
  const int64_t runs_before = compiler.codegen_runs();
  std::vector<absl::StatusOr<std::shared_ptr<const CompiledKernel>>> compiled(
      calls.size(), absl::UnknownError("not compiled"));
  auto compile = [&](int64_t i) {
    compiled[i] = compiler.Compile(calls[i].kernel, options.origin, options.persist);
  };
  device::ThreadArena* threads = options.threads;
  if (threads != nullptr && threads->threads() > 1 && calls.size() > 1) {
    const int64_t extent[2] = {static_cast<int64_t>(calls.size()), 1};
    const int64_t grain[2] = {1, 1};
    threads->ParallelFor2D(extent, grain, [&](const int64_t lo[2], const int64_t hi[2]) {
      for (int64_t i = lo[0]; i < hi[0]; ++i) compile(i);
    });
  } else {
    for (size_t i = 0; i < calls.size(); ++i) compile(static_cast<int64_t>(i));
  }
  codegen_runs = compiler.codegen_runs() - runs_before;
  kernels.clear();
  for (auto& c : compiled) {
    if (!c.ok()) return c.status();
    kernels.push_back(*std::move(c));
  }
  return absl::OkStatus();
}

// Level 5, second half: the Plan's kernel calls, arena slots and packed constants.
std::unique_ptr<Plan> BindPlan(const LoweredProgram& program, const CompiledKernels& kernels) {
  auto plan = std::make_unique<Plan>();
  plan->symbols = program.symbol_sources;
  for (const auto& members : program.buffers.slot_members) {
    std::vector<ir::SymExpr> sizes;
    for (int b : members) sizes.push_back(program.tiles.buffers[b].elements);
    plan->slot_sizes.push_back(std::move(sizes));
  }
  for (size_t i = 0; i < program.tiles.calls.size(); ++i) {
    const ir::KernelCall& call = program.tiles.calls[i];
    PlanKernel k;
    k.fn = kernels[i]->fn;
    k.name = kernels[i]->symbol;
    k.grid = ir::KernelGrid(call.kernel);
    k.grain[0] = call.kernel.config.tile_rows;
    k.grain[1] = call.kernel.config.tile_cols;
    k.work_per_cell = call.work_per_cell;
    k.scratch_bytes = KernelScratchBytes(call.kernel);
    k.nodes = call.nodes;
    for (size_t slot = 0; slot < call.buffers.size(); ++slot) {
      const ir::Buffer& buf = program.tiles.buffers[call.buffers[slot]];
      const int b = call.buffers[slot];
      BufferRef ref;
      ref.kind = buf.kind;
      ref.node = buf.node;
      for (const ir::Store& st : call.kernel.stores) {
        if (call.kernel.accesses[st.access].buffer == static_cast<int>(slot)) ref.written = true;
      }
      ref.index = buf.kind == ir::BufferKind::kTemp ? program.buffers.slot_of[b] : buf.index;
      if (buf.kind == ir::BufferKind::kPacked) {
        ref.index = static_cast<int>(plan->packed.size());
        plan->packed.emplace_back(buf.index, buf.pack);
      }
      k.buffers.push_back(ref);
    }
    plan->code.push_back(kernels[i]);
    plan->kernels.push_back(std::move(k));
  }
  plan->SetSingleLaunch();
  return plan;
}

std::string AppliedTuningText(const ir::TileGraph& tiles, const AppliedTuning& tuning) {
  std::string out;
  for (size_t c = 0; c < tiles.calls.size(); ++c) {
    const std::optional<proto::TuningRecord>& r = tuning.records[c];
    absl::StrAppend(&out, tiles.calls[c].kernel.name, ": ",
                    r.has_value() ? absl::StrCat("tuned config from the cache (", r->trials(),
                                                 " trials", r->complete() ? ", complete" : "", ")")
                                  : std::string("default config"),
                    "\n");
  }
  return out;
}

std::string CompiledKernelsText(const LoweredProgram& program, const CompiledKernels& kernels) {
  std::string out;
  for (size_t i = 0; i < kernels.size(); ++i) {
    absl::StrAppend(&out, program.tiles.calls[i].kernel.name, ": ", kernels[i]->symbol, "\n");
  }
  return out;
}

std::string PlanText(const Plan& plan) {
  return absl::StrCat(plan.kernels.size(), " kernel calls, ", plan.slot_sizes.size(),
                      " arena slots, ", plan.packed.size(), " packed constants\n");
}

// Levels 1 to 5.
absl::Status CompileSteps(const ir::Graph& traced, const ShapeClass& cls,
                          const PipelineOptions& options, const TuningRecordSource& records,
                          KernelCompiler& compiler, const BuildPlanOptions& build, Steps& steps,
                          CompiledProgram& out) {
  LoweredProgram& p = out.program;
  if (absl::Status s = LowerSteps(traced, cls, options, steps, p); !s.ok()) return s;
  for (const ir::KernelCall& call : p.tiles.calls)
    out.default_configs.push_back(call.kernel.config);
  steps.Do(
      "apply_tuning_records", [&] { out.tuning = ApplyTuningRecords(p.tiles, records); },
      [&] { return AppliedTuningText(p.tiles, out.tuning); });
  CompiledKernels kernels;
  if (absl::Status s = steps.Try(
          "compile_kernels",
          [&] { return CompileKernels(p, compiler, build, kernels, out.built.kernels_compiled); },
          [&] { return CompiledKernelsText(p, kernels); });
      !s.ok()) {
    return s;
  }
  steps.Do(
      "bind_plan",
      [&] {
        out.built.plan = BindPlan(p, kernels);
        for (const auto& k : kernels) out.built.kernel_keys.push_back(k->cache_key);
      },
      [&] { return PlanText(*out.built.plan); });
  return absl::OkStatus();
}

bool IsLevel5Step(std::string_view step) {
  return step == "apply_tuning_records" || step == "compile_kernels" || step == "bind_plan";
}

}  // namespace

absl::StatusOr<LoweredProgram> Lower(const ir::Graph& traced, const ShapeClass& cls,
                                     const PipelineOptions& options) {
  LoweredProgram p;
  std::vector<StepTime> times;
  Steps steps(options, &times);
  if (absl::Status s = LowerSteps(traced, cls, options, steps, p); !s.ok()) return s;
  p.steps = std::move(times);
  return p;
}

absl::StatusOr<BuiltPlan> BuildPlan(const LoweredProgram& program, KernelCompiler& compiler,
                                    const BuildPlanOptions& options) {
  BuiltPlan built;
  CompiledKernels kernels;
  if (absl::Status s = CompileKernels(program, compiler, options, kernels, built.kernels_compiled);
      !s.ok()) {
    return s;
  }
  built.plan = BindPlan(program, kernels);
  for (const auto& k : kernels) built.kernel_keys.push_back(k->cache_key);
  return built;
}

absl::StatusOr<CompiledProgram> CompileShapeClass(const ir::Graph& traced, const ShapeClass& cls,
                                                  const PipelineOptions& options,
                                                  const TuningRecordSource& records,
                                                  KernelCompiler& compiler,
                                                  const BuildPlanOptions& build) {
  CompiledProgram out;
  Steps steps(options, &out.program.steps);
  if (absl::Status s = CompileSteps(traced, cls, options, records, compiler, build, steps, out);
      !s.ok()) {
    return s;
  }
  return out;
}

std::span<const std::string_view> PipelineStepNames() { return kSteps; }
std::span<const std::string_view> PipelineLevelNames() { return kLevelNames; }

std::string PipelineStageList() {
  auto join = [](std::span<const std::string_view> names) {
    std::string out;
    for (std::string_view n : names) absl::StrAppend(&out, out.empty() ? "" : ", ", std::string(n));
    return out;
  };
  return absl::StrCat("a level (", join(kLevelNames), ") or a step (", join(kSteps), ")");
}

absl::StatusOr<std::string> PrintAfter(std::string_view stage, const ir::Graph& traced,
                                       const ShapeClass& cls, const PipelineOptions& options,
                                       const TuningRecordSource& records, KernelCompiler& compiler,
                                       int threads) {
  const bool is_level =
      std::find(std::begin(kLevelNames), std::end(kLevelNames), stage) != std::end(kLevelNames);
  const bool is_step = std::find(std::begin(kSteps), std::end(kSteps), stage) != std::end(kSteps);
  if (!is_level && !is_step) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown stage '", std::string(stage), "': ", PipelineStageList()));
  }
  std::vector<StepTime> times;
  Steps steps(options, &times, is_step ? stage : std::string_view());
  if (IsLevel5Step(stage)) {
    BuildPlanOptions build;
    build.persist = false;
    CompiledProgram out;
    if (absl::Status s = CompileSteps(traced, cls, options, records, compiler, build, steps, out);
        !s.ok()) {
      return s;
    }
    return steps.stopped_text();
  }
  LoweredProgram p;
  if (absl::Status s = LowerSteps(traced, cls, options, steps, p); !s.ok()) return s;
  if (is_step) return steps.stopped_text();
  if (stage == "tensor") return p.graph.ToString();
  if (stage == "tile") return p.tiles.ToString();
  if (stage == "block") return BlockScheduleText(p.graph, p.tiles, threads);
  if (stage == "exec") return ExecutionText(p.tiles, p.buffers);
  std::string out;  // llvm or asm
  for (const ir::KernelCall& c : p.tiles.calls) {
    absl::StatusOr<std::string> text =
        stage == "llvm" ? compiler.EmitLlvmIr(c.kernel, true) : compiler.EmitAssembly(c.kernel);
    if (!text.ok()) return text.status();
    out += *text;
  }
  return out;
}

}  // namespace pto::jit
