// Level 1: the tensor graph, as traced. Nodes are in topological order (inputs before users).
#ifndef PTO_JIT_IR_GRAPH_H_
#define PTO_JIT_IR_GRAPH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jit/ir/dtype.h"
#include "jit/ir/sym_expr.h"

namespace pto::ir {

// Values are part of the GraphDef schema (proto/graph.proto mirrors them): never renumber.
enum class OpKind : uint8_t {
  kInput = 0,     // attrs.index: position in the Function's inputs
  kConstant = 1,  // a scalar constant (shape []), attrs.scalar
  // Binary elementwise, numpy broadcasting.
  kAdd = 10, kSub = 11, kMul = 12, kDiv = 13, kMax = 14, kMin = 15,
  // Comparisons, numpy broadcasting; the result is f32 1 (true) or 0 (false).
  kEq = 16, kNe = 17, kLt = 18, kLe = 19, kGt = 20, kGe = 21,
  kWhere = 22,  // inputs: condition (nonzero = true), a, b; numpy broadcasting of all three
  // Unary elementwise.
  kNeg = 30, kAbs = 31, kExp = 32, kLog = 33, kSqrt = 34, kRsqrt = 35, kTanh = 36,
  kSigmoid = 37, kRelu = 38, kGeluTanh = 39, kGeluErf = 40, kSilu = 41,
  kCast = 42,  // attrs.dtype
  kErf = 43,
  kGeluErfGrad = 44,  // d/dx gelu_erf(x) = Phi(x) + x phi(x): what gelu_erf's gradient rule emits
  // Reductions over attrs.axis (attrs.keepdims).
  kReduceSum = 60, kReduceMax = 61, kReduceMean = 62,
  kLogSumExp = 63,
  // Row operators over the last axis.
  kSoftmax = 70, kLogSoftmax = 71,
  kLayerNorm = 72,  // inputs: x, weight, bias; attrs.eps
  kRmsNorm = 73,    // inputs: x, weight; attrs.eps
  // Backward row operators (what the gradient pass emits): the input gradient of the row op.
  kSoftmaxGrad = 74,     // inputs: y = softmax(x), dy
  kLogSoftmaxGrad = 75,  // inputs: y = log_softmax(x), dy
  kLayerNormGrad = 76,   // inputs: x, weight, dy; attrs.eps
  kRmsNormGrad = 77,     // inputs: x, weight, dy; attrs.eps
  // Contraction: [..., M, K] x [..., K, N] (attrs.transpose_a/b swap the last two axes).
  kMatMul = 80,
  // Data movement.
  kTranspose = 90,  // attrs.ints = permutation
  kReshape = 91,    // attrs.ints = requested shape (-1 infers, 0 keeps the input dim)
  kConcat = 92,     // attrs.axis
  kSlice = 93,      // attrs.axis, attrs.start, attrs.end, attrs.step
  // Indexing.
  kIota = 94,        // input: a tensor giving only the shape; attrs.axis; i32 index along it
  kGather = 95,      // inputs: x, indices (i32); attrs.axis (numpy's take along the axis)
  kOneHot = 96,      // input: indices (i32); attrs.ints = {depth}; f32
  kScatterAdd = 97,  // inputs: like (its shape), updates, indices (i32); attrs.axis
  kBroadcastTo = 98,  // attrs.shape (numpy broadcasting of the input to it)
};

const char* OpName(OpKind op);
bool IsUnaryElementwise(OpKind op);
bool IsBinaryElementwise(OpKind op);
bool IsElementwise(OpKind op);  // unary, binary, cast, constant
bool IsComparison(OpKind op);   // eq, ne, lt, le, gt, ge

struct Attrs {
  int64_t index = 0;  // kInput
  double scalar = 0;  // kConstant
  int64_t axis = 0;
  bool keepdims = false;
  bool transpose_a = false;
  bool transpose_b = false;
  float eps = 1e-5f;
  int64_t start = 0, end = 0, step = 1;
  DType dtype = DType::kF32;  // kCast target
  std::vector<int64_t> ints;  // permutation or reshape spec
  // A symbolic target shape: broadcast_to's, or a reshape's when `ints` is empty (the gradient
  // pass reshapes back to shapes like [batch, seq, 768] that no `ints` spec can name).
  Shape shape;

  friend bool operator==(const Attrs&, const Attrs&) = default;
};

struct Node {
  OpKind op = OpKind::kInput;
  std::vector<int> inputs;  // node ids
  Attrs attrs;
  DType dtype = DType::kF32;
  Shape shape;
  std::string name;  // optional, for dumps; never part of the hash
  // A copy of a forward value that the backward pass computes again instead of keeping the
  // original alive (jit/passes/recompute_cheap_values.h); CSE must not merge it back.
  bool recomputed = false;
  // The gradient-checkpoint segment (pto::checkpoint) the trace made this node in, -1: none.
  // The backward pass recomputes the segment's values it reads from the segment's inputs
  // (jit/passes/recompute_checkpoints.h), which clears the marks.
  int checkpoint = -1;
};

// A symbol whose value is not given by an input dim but computed from other symbols when a
// call binds its shapes, for a rule whose result is no polynomial of the input dims: the start
// or the length of a slice of the symbolic dim `dim` (numpy's clamping and ceiling division).
// ops/derived_symbols.h creates and evaluates them.
struct DerivedSymbol {
  enum class Kind : uint8_t { kSliceStart = 0, kSliceLength = 1 };
  Kind kind = Kind::kSliceLength;
  SymExpr dim;  // over symbols with smaller ids
  int64_t start = 0, end = 0, step = 1;
  friend bool operator==(const DerivedSymbol&, const DerivedSymbol&) = default;
};

struct SymbolInfo {
  std::string name;
  int64_t min = 1;
  int64_t max = INT64_MAX;
  std::optional<DerivedSymbol> derived;  // unset: bound from an input dim
};

// A condition on the symbols that a shape rule accepted only for some of their values: `expr`
// must be >= 1 at every call, else the call is InvalidArgument with `message` (a reshape's -1
// inferred by dividing by a product of dims that may be 0: numpy finds any size would fit).
struct ShapeGuard {
  SymExpr expr;
  std::string message;
};

struct Graph {
  std::vector<Node> nodes;
  std::vector<int> outputs;          // node ids
  std::vector<SymbolInfo> symbols;   // symbol id -> info
  std::vector<ShapeGuard> guards;    // made by the tracer; not serialized (a replay remakes them)
  int num_inputs = 0;

  std::vector<std::string> SymbolNames() const;
  // Human-readable listing, one node a line: "%3 = add(%1, %2) : f32[batch, 768]".
  std::string ToString() const;
};

}  // namespace pto::ir

#endif  // PTO_JIT_IR_GRAPH_H_
