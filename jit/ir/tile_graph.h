// Level 2 as a whole: the kernels of one shape class and the buffers they read and write, in
// execution order. Level 3 (schedule) and level 4 (execution plan) annotate this.
#ifndef PTO_JIT_IR_TILE_GRAPH_H_
#define PTO_JIT_IR_TILE_GRAPH_H_

#include <string>
#include <utility>
#include <vector>

#include "jit/ir/graph.h"
#include "jit/ir/tile_ir.h"

namespace pto::ir {

// kPacked: a constant input (`index`) repacked once for a matmul's B (Buffer::pack); the plan
// builds it at the first call with those constants and keeps it.
enum class BufferKind : uint8_t { kInput = 0, kOutput = 1, kTemp = 2, kPacked = 3 };

// How a kPacked buffer is laid out from its input: the first N / block * block columns of the
// K x N matrix B (element (k, n) at input[offset + k * stride_k + n * stride_n]), in column
// blocks of `block`, each block's K rows contiguous: (k, n) goes to
// [((n / block) * K + k) * block + n % block]. The remaining columns are read from the input.
struct PackedB {
  int64_t k = 0, n = 0, offset = 0, stride_k = 0, stride_n = 0;
  int block = 1;
  // Elements of the packed copy: K rows of every full column block.
  int64_t elements() const { return n / block * block * k; }
  friend bool operator==(const PackedB&, const PackedB&) = default;
};

struct Buffer {
  BufferKind kind = BufferKind::kTemp;
  int index = 0;     // input or output position (kPacked: the input it is packed from)
  PackedB pack;      // kPacked only
  SymExpr elements;  // size in elements
  DType dtype = DType::kF32;
  std::string label;  // for dumps: the node it holds
  // The graph node whose values it holds, contiguous in row-major order; -1: none (a copy
  // laid out for a matmul, a packed constant).
  int node = -1;
};

struct KernelCall {
  Kernel kernel;
  std::vector<int> buffers;  // kernel slot -> TileGraph buffer id
  // The graph nodes whose ops the kernel computes (its anchor and the ops inlined into it),
  // ascending; views and casts it only indexes through are not among them.
  std::vector<int> nodes;
  // Level 3 (schedule): scalar operations per grid cell, to decide whether a launch is worth
  // splitting across threads.
  SymExpr work_per_cell = 1;
  // Level 4 (jit/passes/mark_in_place.cc): pairs {output buffer, input buffer} (TileGraph ids,
  // both temps) that this call may write in place: the output may share the input's memory,
  // because the kernel reads every element of that input at the same index it writes, before
  // writing it, and the input dies at this call. plan_buffers puts each pair in one slot.
  std::vector<std::pair<int, int>> in_place;
};

// Level 4 (jit/passes/plan_in_place_outputs.cc): how a Function output declared in place of
// an input (FunctionOptions::in_place_outputs) is written: straight over the input's memory
// (`in_place`), or into a temp copied over it after the input's last reader. `reason` says why.
struct InPlaceOutputPlan {
  int output = 0;
  int input = 0;
  bool in_place = false;
  std::string reason;
};

struct TileGraph;
// Per TileGraph buffer: the first and last call (in execution order) that uses it; -1 if none.
void BufferLifetimes(const TileGraph& tiles, std::vector<int>* first, std::vector<int>* last);

struct TileGraph {
  std::vector<Buffer> buffers;
  std::vector<KernelCall> calls;  // in execution order
  std::vector<SymbolInfo> symbols;
  std::vector<InPlaceOutputPlan> in_place_outputs;  // level 4, one per declared output

  std::string ToString() const;
};

}  // namespace pto::ir

#endif  // PTO_JIT_IR_TILE_GRAPH_H_
