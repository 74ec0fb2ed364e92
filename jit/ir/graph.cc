#include "jit/ir/graph.h"

#include <cstdio>

namespace pto::ir {

const char* OpName(OpKind op) {
  switch (op) {
    case OpKind::kInput: return "input";
    case OpKind::kConstant: return "constant";
    case OpKind::kAdd: return "add";
    case OpKind::kSub: return "sub";
    case OpKind::kMul: return "mul";
    case OpKind::kDiv: return "div";
    case OpKind::kMax: return "max";
    case OpKind::kMin: return "min";
    case OpKind::kEq: return "eq";
    case OpKind::kNe: return "ne";
    case OpKind::kLt: return "lt";
    case OpKind::kLe: return "le";
    case OpKind::kGt: return "gt";
    case OpKind::kGe: return "ge";
    case OpKind::kWhere: return "where";
    case OpKind::kNeg: return "neg";
    case OpKind::kAbs: return "abs";
    case OpKind::kExp: return "exp";
    case OpKind::kLog: return "log";
    case OpKind::kSqrt: return "sqrt";
    case OpKind::kRsqrt: return "rsqrt";
    case OpKind::kTanh: return "tanh";
    case OpKind::kSigmoid: return "sigmoid";
    case OpKind::kRelu: return "relu";
    case OpKind::kGeluTanh: return "gelu_tanh";
    case OpKind::kGeluErf: return "gelu_erf";
    case OpKind::kSilu: return "silu";
    case OpKind::kCast: return "cast";
    case OpKind::kErf: return "erf";
    case OpKind::kGeluErfGrad: return "gelu_erf_grad";
    case OpKind::kReduceSum: return "reduce_sum";
    case OpKind::kReduceMax: return "reduce_max";
    case OpKind::kReduceMean: return "reduce_mean";
    case OpKind::kLogSumExp: return "logsumexp";
    case OpKind::kSoftmax: return "softmax";
    case OpKind::kLogSoftmax: return "log_softmax";
    case OpKind::kLayerNorm: return "layer_norm";
    case OpKind::kRmsNorm: return "rms_norm";
    case OpKind::kSoftmaxGrad: return "softmax_grad";
    case OpKind::kLogSoftmaxGrad: return "log_softmax_grad";
    case OpKind::kLayerNormGrad: return "layer_norm_grad";
    case OpKind::kRmsNormGrad: return "rms_norm_grad";
    case OpKind::kMatMul: return "matmul";
    case OpKind::kTranspose: return "transpose";
    case OpKind::kReshape: return "reshape";
    case OpKind::kConcat: return "concat";
    case OpKind::kSlice: return "slice";
    case OpKind::kIota: return "iota";
    case OpKind::kGather: return "gather";
    case OpKind::kOneHot: return "one_hot";
    case OpKind::kScatterAdd: return "scatter_add";
    case OpKind::kBroadcastTo: return "broadcast_to";
  }
  return "unknown";
}

bool IsUnaryElementwise(OpKind op) {
  return (op >= OpKind::kNeg && op <= OpKind::kSilu) || op == OpKind::kCast || op == OpKind::kErf ||
         op == OpKind::kGeluErfGrad;
}

bool IsBinaryElementwise(OpKind op) { return op >= OpKind::kAdd && op <= OpKind::kMin; }

bool IsElementwise(OpKind op) {
  return IsUnaryElementwise(op) || IsBinaryElementwise(op) || op == OpKind::kConstant;
}

bool IsComparison(OpKind op) { return op >= OpKind::kEq && op <= OpKind::kGe; }

std::vector<std::string> Graph::SymbolNames() const {
  std::vector<std::string> names;
  for (const SymbolInfo& s : symbols) names.push_back(s.name);
  return names;
}

std::string Graph::ToString() const {
  std::vector<std::string> names = SymbolNames();
  std::string out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    out += "%" + std::to_string(i) + " = " + std::string(OpName(n.op)) + "(";
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      if (j) out += ", ";
      out += "%" + std::to_string(n.inputs[j]);
    }
    out += ")";
    switch (n.op) {
      case OpKind::kInput: out += " index=" + std::to_string(n.attrs.index); break;
      case OpKind::kConstant: {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%.9g", n.attrs.scalar);
        out += std::string(" value=") + buf;
        break;
      }
      case OpKind::kReduceSum:
      case OpKind::kReduceMax:
      case OpKind::kReduceMean:
      case OpKind::kLogSumExp:
        out += " axis=" + std::to_string(n.attrs.axis) + (n.attrs.keepdims ? " keepdims" : "");
        break;
      case OpKind::kConcat:
      case OpKind::kGather:
      case OpKind::kScatterAdd:
      case OpKind::kIota: out += " axis=" + std::to_string(n.attrs.axis); break;
      case OpKind::kOneHot:
        if (!n.attrs.ints.empty()) out += " depth=" + std::to_string(n.attrs.ints[0]);
        break;
      case OpKind::kSlice:
        out += " axis=" + std::to_string(n.attrs.axis) + " start=" +
               std::to_string(n.attrs.start) + " end=" + std::to_string(n.attrs.end) +
               " step=" + std::to_string(n.attrs.step);
        break;
      case OpKind::kMatMul:
        if (n.attrs.transpose_a) out += " transpose_a";
        if (n.attrs.transpose_b) out += " transpose_b";
        break;
      case OpKind::kLayerNorm:
      case OpKind::kRmsNorm:
      case OpKind::kLayerNormGrad:
      case OpKind::kRmsNormGrad: {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%g", n.attrs.eps);
        out += std::string(" eps=") + buf;
        break;
      }
      case OpKind::kBroadcastTo:
        out += " to=" + ShapeToString(n.attrs.shape, names);
        break;
      case OpKind::kReshape:
        if (n.attrs.ints.empty() && !n.attrs.shape.empty()) {  // a symbolic target
          out += " to=" + ShapeToString(n.attrs.shape, names);
          break;
        }
        [[fallthrough]];
      case OpKind::kTranspose: {
        out += n.op == OpKind::kTranspose ? " perm=[" : " shape=[";
        for (size_t j = 0; j < n.attrs.ints.size(); ++j) {
          out += (j ? "," : "") + std::to_string(n.attrs.ints[j]);
        }
        out += "]";
        break;
      }
      case OpKind::kCast: out += " to=" + std::string(DTypeName(n.attrs.dtype)); break;
      default: break;
    }
    out += " : " + std::string(DTypeName(n.dtype)) + ShapeToString(n.shape, names);
    if (!n.name.empty()) out += "  // " + n.name;
    out += "\n";
  }
  out += "outputs:";
  for (int o : outputs) out += " %" + std::to_string(o);
  return out + "\n";
}

}  // namespace pto::ir
