// Which buffers of a plan check_numerics scans after which kernel: each buffer holding a graph
// node is scanned once, after the last kernel that writes it (a concat's result is written by
// several kernels, each its own window), with the kernels that wrote it.
#ifndef PTO_JIT_NUMERICS_WRITTEN_BUFFERS_H_
#define PTO_JIT_NUMERICS_WRITTEN_BUFFERS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "jit/ir/graph.h"
#include "jit/plan.h"

namespace pto::jit::numerics {

struct WrittenBuffer {
  int slot = 0;              // in PlanKernel::buffers of the kernel it is scanned after
  int node = 0;              // the graph node it holds (BufferRef::node)
  std::vector<int> writers;  // the kernels that write it, in plan order (the last scans it)
};

// Per kernel of `plan`: the buffers to scan after it. Buffers with no graph node (BufferRef::
// node < 0: copies laid out for a matmul) are not scanned: they copy values that were.
std::vector<std::vector<WrittenBuffer>> BuffersToScan(const Plan& plan);

// The concrete shape of graph node `node` at the kernel symbols `symbols`.
std::vector<int64_t> NodeShape(const ir::Graph& graph, int node, std::span<const int64_t> symbols);

}  // namespace pto::jit::numerics

#endif  // PTO_JIT_NUMERICS_WRITTEN_BUFFERS_H_
