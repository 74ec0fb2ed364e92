// Concrete inputs against the inputs a GraphDef declares, before anything is traced or run:
// `pto run` refuses a tensor the graph does not take rather than broadcasting or reading it
// with the wrong shape.
#ifndef PTO_TOOLS_PTO_GRAPH_INPUT_CHECK_H_
#define PTO_TOOLS_PTO_GRAPH_INPUT_CHECK_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "jit/ir/graph.h"

namespace pto::tools {

struct GivenInput {
  std::vector<int64_t> shape;
  ir::DType dtype = ir::DType::kF32;
};

// OK when inputs[i] fits `graph`'s input i (named names[i]): its dtype and rank are the
// declared ones, each constant dim is equal, each dim that is one symbol gives that symbol the
// same value wherever it appears and a value within the symbol's range, and each other
// symbolic dim (a polynomial such as 2*seq) equals its value once its symbols are bound.
// Otherwise InvalidArgument about the first input (by index) that does not fit, e.g.
//   "input 0 (x): dtype f64, declared f32 ('<f4' in a .npy file)"
//   "input 0 (x): shape [24, 29] does not match the declared shape [23, 29]: dim 0 is 24,
//    declared 23"
//   "input 0 (x): shape [17] does not match the declared shape [3, 1, 17]: rank 1, declared 3"
//   "input 1 (m): shape [5, 12] does not match the declared shape [batch, 12]: dim 0 is 5,
//    but batch is 3 (dim 0 of input 0 (x))"
absl::Status CheckGraphInputs(const ir::Graph& graph, std::span<const std::string> names,
                              std::span<const GivenInput> inputs);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_GRAPH_INPUT_CHECK_H_
