// Graphs and helpers shared by the jit/graph tests.
#ifndef PTO_TESTS_JIT_GRAPH_TEST_GRAPHS_H_
#define PTO_TESTS_JIT_GRAPH_TEST_GRAPHS_H_

#include <string>
#include <vector>

#include "jit/ir/graph.h"

namespace pto::graph::testing {

// The MLP of tests/data/golden_mlp.pbtxt:
//   x[batch, 768], w1[768, 3072], b1[3072], w2[3072, 768]  (batch in [1, 4096])
//   out = matmul(gelu_erf(matmul(x, w1) + b1), w2) + x
ir::Graph MakeMlp();

// Two independent branches over inputs a[n, m] and b[m] (n in [1, 64], m in [8, 8192]):
//   out0 = reduce_sum(exp(a) * 2, axis 1, keepdims), out1 = tanh(b)
// Covers constants, attrs and several outputs.
ir::Graph MakeBranches();

// The same graph with its nodes in another order: new_order[k] is the id (in `graph`) of the
// node that becomes node k. new_order must be a topological order.
ir::Graph Reorder(const ir::Graph& graph, const std::vector<int>& new_order);

// Empty when equal, else the first difference (compares every field, names included).
std::string Difference(const ir::Graph& a, const ir::Graph& b);

}  // namespace pto::graph::testing

#endif  // PTO_TESTS_JIT_GRAPH_TEST_GRAPHS_H_
