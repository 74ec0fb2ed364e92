#include "jit/call_validation.h"

#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace pto::detail {
namespace {

std::string DimsString(const int64_t* dims, int rank) {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) absl::StrAppend(&s, i ? ", " : "", dims[i]);
  return s + "]";
}

// FunctionOptions::in_place_outputs against the arity and the constant inputs (the outputs'
// count is known once traced: the pipeline checks it).
absl::Status ValidateInPlaceOutputs(int num_inputs, const FunctionOptions& options) {
  const std::vector<InPlaceOutput>& pairs = options.in_place_outputs;
  for (size_t p = 0; p < pairs.size(); ++p) {
    const InPlaceOutput& d = pairs[p];
    if (d.output < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("in-place output ", d.output, " does not exist"));
    }
    if (d.input < 0 || d.input >= num_inputs) {
      return absl::InvalidArgumentError(absl::StrCat("in-place output ", d.output, ": input ",
                                                     d.input, " does not exist (", num_inputs,
                                                     " inputs)"));
    }
    for (size_t q = 0; q < p; ++q) {
      if (pairs[q].output == d.output) {
        return absl::InvalidArgumentError(
            absl::StrCat("output ", d.output, " is declared in place twice (over input ",
                         pairs[q].input, " and input ", d.input, ")"));
      }
      if (pairs[q].input == d.input) {
        return absl::InvalidArgumentError(absl::StrCat("input ", d.input,
                                                       " is written in place by two outputs (",
                                                       pairs[q].output, " and ", d.output, ")"));
      }
    }
    for (int c : options.constant_inputs) {
      if (c == d.input) {
        return absl::InvalidArgumentError(absl::StrCat(
            "input ", c, " is both constant and written in place by output ", d.output));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckTensorView(const TensorView& t, const char* what, int index) {
  if (t.rank < 0 || t.rank > kMaxRank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", index, ": rank ", t.rank, " is outside [0, ", kMaxRank, "]"));
  }
  if (t.dtype != DType::kF32 && t.dtype != DType::kI32) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", index, ": dtype ", DTypeName(t.dtype),
                                                   " is not supported (expected f32 or i32)"));
  }
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " ", index, ": dim ", d, " is negative (", t.shape[d], ")"));
    }
  }
  const int64_t n = t.num_elements();
  if (n < 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", index, ": shape ", t.ShapeString(),
                                                   " has more elements than int64 can count"));
  }
  if (n > (int64_t{1} << 62) / 4) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", index, ": shape ", t.ShapeString(),
                                                   " is too large to address in bytes"));
  }
  if (t.data == nullptr && n > 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", index, ": data pointer is null"));
  }
  if (reinterpret_cast<uintptr_t>(t.data) % alignof(float) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", index, ": data pointer is not aligned to 4 bytes"));
  }
  int64_t expected = 1;
  for (int d = t.rank - 1; d >= 0 && n > 0; --d) {  // an empty tensor's strides are never used
    if (t.shape[d] != 1 && t.strides[d] != expected) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " ", index, ": strides ", DimsString(t.strides, t.rank), " for shape ",
          t.ShapeString(), " are not dense row-major (pto supports dense row-major tensors only)"));
    }
    expected *= t.shape[d];
  }
  return absl::OkStatus();
}

absl::Status ValidateFunctionOptions(int num_inputs, const FunctionOptions& options) {
  if (num_inputs > kMaxInputs) {
    return absl::InvalidArgumentError(
        absl::StrCat("at most ", kMaxInputs, " inputs are supported"));
  }
  if (!options.input_dtypes.empty()) {
    if (options.input_dtypes.size() != static_cast<size_t>(num_inputs)) {
      return absl::InvalidArgumentError(absl::StrCat("input_dtypes names ",
                                                     options.input_dtypes.size(), " dtypes for ",
                                                     num_inputs, " inputs"));
    }
    for (size_t i = 0; i < options.input_dtypes.size(); ++i) {
      const DType d = options.input_dtypes[i];
      if (d != DType::kF32 && d != DType::kI32) {
        return absl::InvalidArgumentError(absl::StrCat("input_dtypes: input ", i, " is ",
                                                       DTypeName(d), "; inputs are f32 or i32"));
      }
    }
  }
  std::map<std::string, std::pair<int64_t, int64_t>> ranges;
  for (const DynamicDim& d : options.dynamic) {
    if (d.input < 0 || d.input >= num_inputs) {
      return absl::InvalidArgumentError(absl::StrCat("dynamic dim '", d.dim.name(), "': input ",
                                                     d.input, " does not exist (", num_inputs,
                                                     " inputs)"));
    }
    if (d.axis < 0 || d.axis >= kMaxRank) {
      return absl::InvalidArgumentError(
          absl::StrCat("dynamic dim '", d.dim.name(), "': axis ", d.axis, " is out of range"));
    }
    if (d.dim.min() < 0 || d.dim.min() > d.dim.max()) {
      return absl::InvalidArgumentError(absl::StrCat("dynamic dim '", d.dim.name(), "': range [",
                                                     d.dim.min(), ", ", d.dim.max(),
                                                     "] is empty or negative"));
    }
    auto [it, inserted] = ranges.emplace(d.dim.name(), std::pair{d.dim.min(), d.dim.max()});
    if (!inserted && it->second != std::pair{d.dim.min(), d.dim.max()}) {
      return absl::InvalidArgumentError(
          absl::StrCat("dynamic dim '", d.dim.name(), "' is declared with two different ranges"));
    }
    for (int c : options.constant_inputs) {
      if (c == d.input) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", c, " is constant and cannot have dynamic dims"));
      }
    }
  }
  for (int c : options.constant_inputs) {
    if (c < 0 || c >= num_inputs) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant input ", c, " does not exist (", num_inputs, " inputs)"));
    }
  }
  if (absl::Status s = ValidateInPlaceOutputs(num_inputs, options); !s.ok()) return s;
  if (options.max_shape_classes < 1) {
    return absl::InvalidArgumentError("max_shape_classes must be at least 1");
  }
  return absl::OkStatus();
}

CallShapes ShapesOfViews(absl::Span<const TensorView> inputs) {
  CallShapes shapes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    shapes.rank[i] = inputs[i].rank;
    shapes.dims[i] = inputs[i].shape;
    shapes.dtype[i] = inputs[i].dtype;
  }
  shapes.has_dtypes = true;
  return shapes;
}

absl::Status CheckViewDType(DType given, DType expected, const char* what, int index) {
  if (given == expected) return absl::OkStatus();
  const bool input = std::string_view(what) == "input";
  return absl::InvalidArgumentError(
      absl::StrCat(what, " ", index, ": dtype ", DTypeName(given), " does not match ",
                   input ? "the dtype the function was traced with, " : "the result's dtype, ",
                   DTypeName(expected)));
}

absl::StatusOr<CallShapes> ShapesOfVectors(const std::string& function, int num_inputs,
                                           absl::Span<const std::vector<int64_t>> input_shapes) {
  if (static_cast<int>(input_shapes.size()) != num_inputs) {
    return absl::InvalidArgumentError(absl::StrCat("function '", function, "' takes ", num_inputs,
                                                   " inputs, got ", input_shapes.size(),
                                                   " shapes"));
  }
  CallShapes shapes;
  for (int i = 0; i < num_inputs; ++i) {
    if (input_shapes[i].size() > static_cast<size_t>(kMaxRank)) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, ": rank ", input_shapes[i].size(),
                                                     " is outside [0, ", kMaxRank, "]"));
    }
    for (size_t d = 0; d < input_shapes[i].size(); ++d) {
      if (input_shapes[i][d] < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", i, ": dim ", d, " is negative (", input_shapes[i][d], ")"));
      }
    }
    if (const TensorView view =
            TensorView::Dense(static_cast<const float*>(nullptr), input_shapes[i]);
        view.num_elements() < 0) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, ": shape ", view.ShapeString(),
                                                     " has more elements than int64 can count"));
    }
    shapes.rank[i] = static_cast<int>(input_shapes[i].size());
    shapes.dims[i] = input_shapes[i].data();
  }
  return shapes;
}

absl::Status CheckInputViews(const std::string& function, int num_inputs,
                             absl::Span<const TensorView> inputs) {
  if (static_cast<int>(inputs.size()) != num_inputs) {
    return absl::InvalidArgumentError(absl::StrCat("function '", function, "' takes ", num_inputs,
                                                   " inputs, got ", inputs.size()));
  }
  for (int i = 0; i < num_inputs; ++i) {
    if (absl::Status s = CheckTensorView(inputs[i], "input", i); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace pto::detail
