// What an embedder hands a Function, checked before anything else runs: its options against
// its arity, each input and output view (rank, dtype, sign, size, pointer, dense strides), and
// the input shapes of a call as the dispatcher reads them.
#ifndef PTO_JIT_CALL_VALIDATION_H_
#define PTO_JIT_CALL_VALIDATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "pto/runtime.h"

namespace pto::detail {

inline constexpr int kMaxInputs = 64;

// Options against the arity (called by Runtime::JitTraced).
absl::Status ValidateFunctionOptions(int num_inputs, const FunctionOptions& options);

// One view; `what` and `index` name it in the message ("input 2: ...").
absl::Status CheckTensorView(const TensorView& view, const char* what, int index);

// A call's inputs: their count, then each view.
absl::Status CheckInputViews(const std::string& function, int num_inputs,
                             absl::Span<const TensorView> inputs);

// The input dims of a call, without allocation, and the inputs' dtypes when the call gave
// views (shapes given as vectors have none: the function's traced dtypes apply).
struct CallShapes {
  int rank[kMaxInputs];
  const int64_t* dims[kMaxInputs];
  DType dtype[kMaxInputs];
  bool has_dtypes = false;
};

// A view's dtype against the one the traced graph has for it: `what` is "input" or "output".
// InvalidArgument naming the view, the given and the expected dtype.
absl::Status CheckViewDType(DType given, DType expected, const char* what, int index);

// The dims and dtypes of views CheckInputViews accepted (the hot path).
CallShapes ShapesOfViews(absl::Span<const TensorView> inputs);
// Shapes given as vectors (Precompile, OutputShapes, Dump), checked for count, rank, sign and
// element count. The result points into `input_shapes`.
absl::StatusOr<CallShapes> ShapesOfVectors(const std::string& function, int num_inputs,
                                           absl::Span<const std::vector<int64_t>> input_shapes);

}  // namespace pto::detail

#endif  // PTO_JIT_CALL_VALIDATION_H_
