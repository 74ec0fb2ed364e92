#include "jit/pipeline.h"

#include "absl/strings/str_cat.h"
#include "jit/codegen/emit_kernel.h"
#include "jit/passes/attach_buffer_extents.h"
#include "jit/passes/build_tile_graph.h"
#include "jit/passes/canonicalize.h"
#include "jit/passes/choose_tile_configs.h"
#include "jit/passes/cse.h"
#include "jit/passes/dce.h"
#include "jit/passes/mark_in_place.h"
#include "jit/passes/prepack_constant_weights.h"
#include "jit/passes/read_short_rows_in_place.h"
#include "jit/passes/specialize_shapes.h"
#include "jit/passes/split_matmul_columns.h"

namespace pto::jit {
namespace {

void LogStage(const PipelineOptions& options, const char* pass, const std::string& text) {
  if (options.log_passes && options.logger != nullptr) {
    options.logger->Log(LogLevel::kDebug, absl::StrCat("after ", pass, ":\n", text));
  }
}

}  // namespace

void RunGraphPasses(ir::Graph& graph, const PipelineOptions& options) {
  Canonicalize(graph);
  LogStage(options, "canonicalize", graph.ToString());
  EliminateCommonSubexpressions(graph);
  LogStage(options, "cse", graph.ToString());
  SplitMatMulColumns(graph);
  LogStage(options, "split_matmul_columns", graph.ToString());
  EliminateDeadCode(graph);
  LogStage(options, "dce", graph.ToString());
}

absl::StatusOr<LoweredProgram> Lower(const ir::Graph& traced, const ShapeClass& cls,
                                     const PipelineOptions& options) {
  LoweredProgram p;
  // Level 1: the tensor graph, specialized to the shape class.
  p.graph = traced;
  Specialization sp = Specialize(cls, traced.symbols);
  SpecializeShapes(p.graph, sp.replacement);
  p.graph.symbols = sp.symbols;
  p.symbol_sources = sp.sources;
  LogStage(options, "specialize_shapes", p.graph.ToString());
  RunGraphPasses(p.graph, options);
  // Level 2: fusion groups and tile kernels.
  p.groups = FormFusionGroups(p.graph, options.fusion);
  absl::StatusOr<ir::TileGraph> tiles = BuildTileGraph(p.graph, p.groups);
  if (!tiles.ok()) return tiles.status();
  p.tiles = *std::move(tiles);
  LogStage(options, "build_tile_graph", p.tiles.ToString());
  // Level 3: block schedule.
  ChooseTileConfigs(p.tiles, *options.device, options.constant_inputs);
  PrepackConstantWeights(p.tiles, options.constant_inputs, options.device->f32_lanes());
  ReadShortRowsOfBInPlace(p.tiles);
  LogStage(options, "prepack_constant_weights", p.tiles.ToString());
  // Level 4: execution graph.
  MarkInPlace(p.tiles);
  p.buffers = PlanBuffers(p.tiles);
  AttachBufferExtents(p.tiles);
  LogStage(options, "plan_buffers", BufferPlanToString(p.tiles, p.buffers));
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
  return p;
}

absl::StatusOr<std::unique_ptr<Plan>> BuildPlan(const LoweredProgram& program,
                                                KernelCompiler& compiler, int64_t* kernels_compiled,
                                                const KernelOrigin& origin,
                                                std::vector<std::string>* kernel_keys, bool persist,
                                                device::ThreadArena* threads) {
  const std::vector<ir::KernelCall>& calls = program.tiles.calls;
  const int64_t runs_before = compiler.codegen_runs();
  std::vector<absl::StatusOr<std::shared_ptr<const CompiledKernel>>> compiled(
      calls.size(), absl::UnknownError("not compiled"));
  auto compile = [&](int64_t i) {
    compiled[i] = compiler.Compile(calls[i].kernel, origin, persist);
  };
  if (threads != nullptr && threads->threads() > 1 && calls.size() > 1) {
    const int64_t extent[2] = {static_cast<int64_t>(calls.size()), 1};
    const int64_t grain[2] = {1, 1};
    threads->ParallelFor2D(extent, grain, [&](const int64_t lo[2], const int64_t hi[2]) {
      for (int64_t i = lo[0]; i < hi[0]; ++i) compile(i);
    });
  } else {
    for (size_t i = 0; i < calls.size(); ++i) compile(static_cast<int64_t>(i));
  }
  if (kernels_compiled != nullptr) *kernels_compiled += compiler.codegen_runs() - runs_before;
  auto plan = std::make_unique<Plan>();
  plan->symbols = program.symbol_sources;
  for (const auto& members : program.buffers.slot_members) {
    std::vector<ir::SymExpr> sizes;
    for (int b : members) sizes.push_back(program.tiles.buffers[b].elements);
    plan->slot_sizes.push_back(std::move(sizes));
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    const ir::KernelCall& call = calls[i];
    if (!compiled[i].ok()) return compiled[i].status();
    const std::shared_ptr<const CompiledKernel>& code = *compiled[i];
    if (kernel_keys != nullptr) kernel_keys->push_back(code->cache_key);
    PlanKernel k;
    k.fn = code->fn;
    k.name = code->symbol;
    k.grid = ir::KernelGrid(call.kernel);
    k.grain[0] = call.kernel.config.tile_rows;
    k.grain[1] = call.kernel.config.tile_cols;
    k.work_per_cell = call.work_per_cell;
    k.scratch_bytes = KernelScratchBytes(call.kernel);
    for (int b : call.buffers) {
      const ir::Buffer& buf = program.tiles.buffers[b];
      BufferRef ref;
      ref.kind = buf.kind;
      ref.index = buf.kind == ir::BufferKind::kTemp ? program.buffers.slot_of[b] : buf.index;
      if (buf.kind == ir::BufferKind::kPacked) {
        ref.index = static_cast<int>(plan->packed.size());
        plan->packed.emplace_back(buf.index, buf.pack);
      }
      k.buffers.push_back(ref);
    }
    plan->code.push_back(code);
    plan->kernels.push_back(std::move(k));
  }
  return plan;
}

}  // namespace pto::jit
