#include "jit/output_allocation.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pto::detail {
namespace {

std::string DimsString(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

absl::Status CheckShape(size_t output, const std::vector<int64_t>& dims, int64_t* elements) {
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(absl::StrCat("output ", output, ": shape ", DimsString(dims),
                                                   " has rank ", dims.size(),
                                                   ", above the maximum rank ", kMaxRank));
  }
  *elements = 1;
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(*elements, d, elements)) {
      return absl::InvalidArgumentError(absl::StrCat("output ", output, ": shape ",
                                                     DimsString(dims),
                                                     " has more elements than int64 can count"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::vector<int64_t>>> EvaluateOutputShapes(
    const ir::Graph& graph, std::span<const int64_t> values) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t o = 0; o < graph.outputs.size(); ++o) {
    const ir::Shape& shape = graph.nodes[graph.outputs[o]].shape;
    std::vector<int64_t> dims;
    for (size_t d = 0; d < shape.size(); ++d) {
      bool overflow = false;
      dims.push_back(shape[d].Evaluate(values, &overflow));
      if (overflow) {
        return absl::InvalidArgumentError(absl::StrCat("output ", o, ": dim ", d, " (",
                                                       shape[d].ToString(graph.SymbolNames()),
                                                       ") overflows int64 at these input shapes"));
      }
    }
    int64_t elements = 0;
    if (absl::Status s = CheckShape(o, dims, &elements); !s.ok()) return s;
    shapes.push_back(std::move(dims));
  }
  return shapes;
}

absl::StatusOr<std::vector<Tensor>> AllocateOutputs(const std::vector<std::vector<int64_t>>& shapes,
                                                    std::span<const DType> dtypes,
                                                    const std::vector<const TensorView*>& in_place) {
  std::vector<Tensor> tensors;
  for (size_t o = 0; o < shapes.size(); ++o) {
    if (o < in_place.size() && in_place[o] != nullptr) {
      tensors.push_back(Tensor::Borrow(*in_place[o]));
      continue;
    }
    int64_t elements = 0;
    if (absl::Status s = CheckShape(o, shapes[o], &elements); !s.ok()) return s;
    if (elements > Tensor::kMaxElements) {
      return absl::ResourceExhaustedError(
          absl::StrCat("output ", o, ": shape ", DimsString(shapes[o]), " has ", elements,
                       " elements, more than pto allocates for one tensor (", Tensor::kMaxElements,
                       "); pass output views over memory of your own"));
    }
    const DType dtype = o < dtypes.size() ? dtypes[o] : DType::kF32;
    tensors.push_back(Tensor::Allocate(shapes[o], dtype));
    if (tensors.back().view().data == nullptr && elements != 0) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot allocate ", elements * DTypeSize(dtype), " bytes for output ", o,
                       " of shape ", DimsString(shapes[o])));
    }
  }
  return tensors;
}

}  // namespace pto::detail
