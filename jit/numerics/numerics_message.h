// The messages of check_numerics' InvalidArgument statuses.
#ifndef PTO_JIT_NUMERICS_NUMERICS_MESSAGE_H_
#define PTO_JIT_NUMERICS_NUMERICS_MESSAGE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "absl/status/statusor.h"
#include "jit/ir/graph.h"
#include "jit/ir/tile_graph.h"
#include "jit/numerics/locate_op.h"
#include "jit/numerics/non_finite.h"

namespace pto::jit::numerics {

// "check_numerics: input 1 holds inf at element 5 [1, 1]".
std::string InputMessage(int input, const NonFinite& found, std::span<const int64_t> shape);

// What a kernel wrote and where it came from.
struct KernelFinding {
  std::string kernel;  // its name (PlanKernel::name)
  ir::BufferKind kind = ir::BufferKind::kTemp;
  int index = 0;  // the output's position (kOutput)
  int node = 0;   // the graph node the buffer holds
  NonFinite found;
  std::span<const int64_t> symbols;  // the kernel symbols' values
  // The re-run's answer (locate_op.h), or why it could not be made.
  absl::StatusOr<std::optional<OpFinding>> op;
};

// "check_numerics: kernel K wrote nan to output 0 (node 4, mul) at element 6 [1, 2]; first
// produced by node 2 (log): nan at its element 6 [1, 2] when the kernel's ops are re-run
// through the reference". An intermediate buffer reads "an intermediate (node 4, mul)".
std::string KernelMessage(const ir::Graph& graph, const KernelFinding& f);

}  // namespace pto::jit::numerics

#endif  // PTO_JIT_NUMERICS_NUMERICS_MESSAGE_H_
