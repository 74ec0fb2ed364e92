// The pipeline, levels 1 to 5, as one readable sequence of passes (like Halide's Lower.cpp).
#ifndef PTO_JIT_PIPELINE_H_
#define PTO_JIT_PIPELINE_H_

#include <memory>
#include <string>
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

namespace pto::jit {

struct LoweredProgram {
  ir::Graph graph;  // level 1 after the graph passes, specialized to the class
  FusionGroups groups;
  ir::TileGraph tiles;  // levels 2 and 3
  BufferPlan buffers;   // level 4
  std::vector<SymbolSource> symbol_sources;
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
};

// Levels 1-4: no code generation.
absl::StatusOr<LoweredProgram> Lower(const ir::Graph& traced, const ShapeClass& cls,
                                     const PipelineOptions& options);
// Level 5: compiles (or loads) every kernel and binds the Plan. `origin` goes into the kernels'
// cache records and timing events; `kernel_keys` (may be null) receives each kernel's cache key
// in plan order. With `persist` false, kernels compiled here are not written to the cache
// (tuning candidates). With `threads`, the kernels compile in parallel on that arena (each
// compile is single-threaded LLVM work: a plan of many kernels is ready sooner).
absl::StatusOr<std::unique_ptr<Plan>> BuildPlan(const LoweredProgram& program,
                                                KernelCompiler& compiler, int64_t* kernels_compiled,
                                                const KernelOrigin& origin = {},
                                                std::vector<std::string>* kernel_keys = nullptr,
                                                bool persist = true,
                                                device::ThreadArena* threads = nullptr);

// Level-1 graph passes alone (used by Lower, and by dumps of the traced graph).
void RunGraphPasses(ir::Graph& graph, const PipelineOptions& options);

}  // namespace pto::jit

#endif  // PTO_JIT_PIPELINE_H_
