#include "jit/ir/tile_ir.h"

#include <cstdio>

namespace pto::ir {

const char* LoopOrderName(LoopOrder order) {
  switch (order) {
    case LoopOrder::kPanelsOuter:
      return "panels_outer";
    case LoopOrder::kRowBlocksOuter:
      return "row_blocks_outer";
  }
  return "?";
}

const char* ExprOpName(ExprOp op) {
  switch (op) {
    case ExprOp::kLoad:
      return "load";
    case ExprOp::kConst:
      return "const";
    case ExprOp::kAcc:
      return "acc";
    case ExprOp::kAdd:
      return "add";
    case ExprOp::kSub:
      return "sub";
    case ExprOp::kMul:
      return "mul";
    case ExprOp::kDiv:
      return "div";
    case ExprOp::kMax:
      return "max";
    case ExprOp::kMin:
      return "min";
    case ExprOp::kNeg:
      return "neg";
    case ExprOp::kAbs:
      return "abs";
    case ExprOp::kExp:
      return "exp";
    case ExprOp::kLog:
      return "log";
    case ExprOp::kSqrt:
      return "sqrt";
    case ExprOp::kRsqrt:
      return "rsqrt";
    case ExprOp::kTanh:
      return "tanh";
    case ExprOp::kSigmoid:
      return "sigmoid";
    case ExprOp::kRelu:
      return "relu";
    case ExprOp::kGeluTanh:
      return "gelu_tanh";
    case ExprOp::kGeluErf:
      return "gelu_erf";
    case ExprOp::kSilu:
      return "silu";
    case ExprOp::kErf:
      return "erf";
    case ExprOp::kGeluErfGrad:
      return "gelu_erf_grad";
    case ExprOp::kEq:
      return "eq";
    case ExprOp::kNe:
      return "ne";
    case ExprOp::kLt:
      return "lt";
    case ExprOp::kLe:
      return "le";
    case ExprOp::kGt:
      return "gt";
    case ExprOp::kGe:
      return "ge";
    case ExprOp::kSelect:
      return "select";
    case ExprOp::kCast:
      return "cast";
    case ExprOp::kIota:
      return "iota";
    case ExprOp::kGather:
      return "gather";
  }
  return "?";
}

bool IsComparison(ExprOp op) { return op >= ExprOp::kEq && op <= ExprOp::kGe; }

bool IsBinary(ExprOp op) { return (op >= ExprOp::kAdd && op <= ExprOp::kMin) || IsComparison(op); }

bool IsTranscendental(ExprOp op) {
  switch (op) {
    case ExprOp::kExp:
    case ExprOp::kLog:
    case ExprOp::kTanh:
    case ExprOp::kSigmoid:
    case ExprOp::kGeluTanh:
    case ExprOp::kGeluErf:
    case ExprOp::kSilu:
    case ExprOp::kErf:
    case ExprOp::kGeluErfGrad:
      return true;
    default:
      return false;
  }
}

TransposingCopy TransposingCopyOf(const Kernel& kernel) {
  const size_t rank = kernel.domain.size();
  if (kernel.kind != KernelKind::kElementwise || rank < 2 || kernel.stores.size() != 1 ||
      kernel.output.size() != 1 || kernel.output[0].op != ExprOp::kLoad ||
      kernel.stores[0].value != 0) {
    return TransposingCopy::kNone;
  }
  const Access& load = kernel.accesses[kernel.output[0].access];
  const Access& store = kernel.accesses[kernel.stores[0].access];
  if (load.gather || load.dtype != store.dtype || load.strides.size() != rank ||
      store.strides.size() != rank) {
    return TransposingCopy::kNone;
  }
  auto unit = [&](const Access& a, size_t d) { return a.strides[d].AsConstant() == 1; };
  if (unit(load, rank - 1) && !unit(store, rank - 1) && unit(store, rank - 2)) {
    return TransposingCopy::kStoresAcross;
  }
  if (unit(store, rank - 1) && !unit(load, rank - 1) && unit(load, rank - 2)) {
    return TransposingCopy::kLoadsAcross;
  }
  return TransposingCopy::kNone;
}

bool MatMulDotForm(const Kernel& kernel) {
  const size_t rank = kernel.domain.size();
  if (kernel.b < 0 || kernel.b >= static_cast<int>(kernel.accesses.size()) || rank < 2 ||
      kernel.accesses[kernel.b].strides.size() != rank + 1) {
    return false;
  }
  const std::vector<SymExpr>& b = kernel.accesses[kernel.b].strides;
  return b[rank - 1].AsConstant() != 1 && b[rank].AsConstant() == 1;
}

bool MatMulCanBlockK(const Kernel& kernel) {
  return kernel.stores.size() == 1 && kernel.stores[0].access >= 0 &&
         kernel.stores[0].access < static_cast<int>(kernel.accesses.size()) &&
         kernel.accesses[kernel.stores[0].access].dtype == DType::kF32;
}

bool IsRowGrad(RowOpKind kind) {
  switch (kind) {
    case RowOpKind::kSoftmaxGrad:
    case RowOpKind::kLogSoftmaxGrad:
    case RowOpKind::kLayerNormGrad:
    case RowOpKind::kRmsNormGrad:
      return true;
    default:
      return false;
  }
}

std::array<SymExpr, 2> KernelGrid(const Kernel& kernel) {
  const Shape& d = kernel.domain;
  const int rank = static_cast<int>(d.size());
  auto product = [&](int from, int to) {
    SymExpr p(1);
    for (int i = from; i < to; ++i) p = p * d[i];
    return p;
  };
  switch (kernel.kind) {
    case KernelKind::kElementwise:
      if (rank == 0) return {SymExpr(1), SymExpr(1)};
      return {product(0, rank - 1), d[rank - 1]};
    case KernelKind::kReduce:
      return {product(0, kernel.axis), product(kernel.axis + 1, rank)};
    case KernelKind::kRowOp:
      return {product(0, rank - 1), SymExpr(1)};
    case KernelKind::kMatMul:
      return {product(0, rank - 1), d[rank - 1]};
    case KernelKind::kScatterAdd:
      if (rank != 4) return {SymExpr(1), SymExpr(1)};
      return {d[0] * d[1], d[3]};
  }
  return {SymExpr(1), SymExpr(1)};
}

namespace {

// Exact and round-trippable: "%a" prints the float's bits (e.g. 0x1.99999ap-4).
std::string ExactFloat(float v) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%a", static_cast<double>(v));
  return buf;
}

std::string ProgramToString(const std::vector<ExprNode>& program) {
  std::string out;
  for (size_t i = 0; i < program.size(); ++i) {
    const ExprNode& n = program[i];
    out += "    v" + std::to_string(i) + " = " + ExprOpName(n.op);
    if (n.dtype != DType::kF32) out += std::string(".") + std::string(DTypeName(n.dtype));
    if (n.op == ExprOp::kLoad || n.op == ExprOp::kGather) out += " a" + std::to_string(n.access);
    if (n.op == ExprOp::kConst) {
      out += " " + (n.dtype == DType::kI32 ? std::to_string(n.ivalue) : ExactFloat(n.value));
    }
    if (n.op == ExprOp::kIota) out += " axis " + std::to_string(n.axis);
    if (n.a >= 0) out += " v" + std::to_string(n.a);
    if (n.b >= 0) out += ", v" + std::to_string(n.b);
    if (n.c >= 0) out += ", v" + std::to_string(n.c);
    out += "\n";
  }
  return out;
}

const char* ReduceName(ReduceKind r) {
  switch (r) {
    case ReduceKind::kSum:
      return "sum";
    case ReduceKind::kMax:
      return "max";
    case ReduceKind::kMean:
      return "mean";
    case ReduceKind::kLogSumExp:
      return "logsumexp";
  }
  return "?";
}

const char* RowOpName(RowOpKind r) {
  switch (r) {
    case RowOpKind::kSoftmax:
      return "softmax";
    case RowOpKind::kLogSoftmax:
      return "log_softmax";
    case RowOpKind::kLayerNorm:
      return "layer_norm";
    case RowOpKind::kRmsNorm:
      return "rms_norm";
    case RowOpKind::kSoftmaxGrad:
      return "softmax_grad";
    case RowOpKind::kLogSoftmaxGrad:
      return "log_softmax_grad";
    case RowOpKind::kLayerNormGrad:
      return "layer_norm_grad";
    case RowOpKind::kRmsNormGrad:
      return "rms_norm_grad";
  }
  return "?";
}

const char* KindName(KernelKind k) {
  switch (k) {
    case KernelKind::kElementwise:
      return "elementwise";
    case KernelKind::kReduce:
      return "reduce";
    case KernelKind::kRowOp:
      return "row_op";
    case KernelKind::kMatMul:
      return "matmul";
    case KernelKind::kScatterAdd:
      return "scatter_add";
  }
  return "?";
}

}  // namespace

std::string KernelToString(const Kernel& kernel, std::span<const std::string> names) {
  std::string out = "kernel " + kernel.name + " (" + KindName(kernel.kind) + ") domain " +
                    ShapeToString(kernel.domain, names);
  // Everything that changes the generated code is printed: this text is the kernel's identity
  // in the in-process memo and in the persistent cache key.
  if (kernel.kind == KernelKind::kMatMul) {
    out += " k=" + kernel.k.ToString(names) + " a=a" + std::to_string(kernel.a) + " b=a" +
           std::to_string(kernel.b);
    if (kernel.b_packed >= 0) {
      out += " b_packed=slot" + std::to_string(kernel.b_packed) + "/" +
             std::to_string(kernel.b_packed_block);
    }
  }
  if (kernel.kind == KernelKind::kScatterAdd) {
    out += " updates=a" + std::to_string(kernel.a) + " indices=a" + std::to_string(kernel.b);
  }
  if (kernel.kind == KernelKind::kReduce) {
    out += std::string(" ") + ReduceName(kernel.reduce) + " axis=" + std::to_string(kernel.axis);
  }
  if (kernel.kind == KernelKind::kRowOp) {
    out += std::string(" ") + RowOpName(kernel.row_op) + " eps=" + ExactFloat(kernel.eps);
  }
  out += " buffers=" + std::to_string(kernel.num_buffers);
  const TileConfig& c = kernel.config;
  out +=
      "\n  config: tile " + std::to_string(c.tile_rows) + "x" + std::to_string(c.tile_cols) +
      " vw " + std::to_string(c.vector_width) + " unroll " + std::to_string(c.unroll) + " mr " +
      std::to_string(c.mr) + " nr " + std::to_string(c.nr_vectors) + " panel " +
      std::to_string(c.panel_bytes) + " pack " + std::to_string(c.pack_b) + " kc " +
      std::to_string(c.kc) + " mc " + std::to_string(c.mc) + " order " +
      LoopOrderName(c.loop_order) +
      (c.pack_prefetch_rows > 0 ? " pack_prefetch " + std::to_string(c.pack_prefetch_rows) : "") +
      (c.prefetch_b > 0 ? " prefetch " + std::to_string(c.prefetch_b) : "") +
      (c.prefetch_output ? " prefetch_output" : "") + (c.narrow_tail ? " narrow_tail" : "") +
      (c.streaming_stores ? " streaming" : "") +
      (c.prefetch_inputs > 0 ? " prefetch_inputs " + std::to_string(c.prefetch_inputs) : "") + "\n";
  for (size_t i = 0; i < kernel.accesses.size(); ++i) {
    const Access& a = kernel.accesses[i];
    std::vector<SymExpr> strides(a.strides.begin(), a.strides.end());
    out += "  a" + std::to_string(i) + ": " + std::string(DTypeName(a.dtype)) + " buf" +
           std::to_string(a.buffer) + " + " + a.offset.ToString(names) + " strides " +
           ShapeToString(strides, names) +
           (a.gather ? " gather stride " + a.gather_stride.ToString(names) + " extent " +
                           a.gather_extent.ToString(names)
                     : "") +
           "\n";
  }
  if (!kernel.input.empty()) {
    out += "  input (v" + std::to_string(kernel.input_value) +
           (kernel.input_dy >= 0 ? ", dy v" + std::to_string(kernel.input_dy) : "") + "):\n" +
           ProgramToString(kernel.input);
  }
  out += "  output:\n" + ProgramToString(kernel.output);
  for (const Store& s : kernel.stores) {
    out += "  store v" + std::to_string(s.value) + " -> a" + std::to_string(s.access) + "\n";
  }
  return out;
}

}  // namespace pto::ir
