#include "jit/codegen/emit_expr.h"

#include "absl/strings/str_cat.h"
#include "jit/codegen/vector_math.h"

namespace pto::jit {

absl::Status ValidateProgram(const std::vector<ir::ExprNode>& program, int num_accesses,
                             bool acc_allowed, const std::string& what) {
  for (size_t i = 0; i < program.size(); ++i) {
    const ir::ExprNode& n = program[i];
    const int idx = static_cast<int>(i);
    auto bad = [&](const std::string& msg) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " node v", idx, " (", ir::ExprOpName(n.op), "): ", msg));
    };
    switch (n.op) {
      case ir::ExprOp::kLoad:
        if (n.access < 0 || n.access >= num_accesses) {
          return bad(absl::StrCat("access ", n.access, " out of range [0, ", num_accesses, ")"));
        }
        break;
      case ir::ExprOp::kConst:
        break;
      case ir::ExprOp::kAcc:
        if (!acc_allowed) return bad("kAcc is not defined in this program");
        break;
      default: {
        if (n.a < 0 || n.a >= idx) return bad("operand a must be an earlier node");
        if (ir::IsBinary(n.op) && (n.b < 0 || n.b >= idx)) {
          return bad("operand b must be an earlier node");
        }
        break;
      }
    }
  }
  return absl::OkStatus();
}

namespace {

bool IsLeaf(ir::ExprOp op) {
  return op == ir::ExprOp::kLoad || op == ir::ExprOp::kConst || op == ir::ExprOp::kAcc;
}

llvm::Value* EmitNode(llvm::IRBuilderBase& b, const ir::ExprNode& n, llvm::Type* type,
                      const std::vector<llvm::Value*>& v, const LoadFn& load, llvm::Value* acc) {
  llvm::Value* a = IsLeaf(n.op) ? nullptr : v[n.a];
  llvm::Value* c = ir::IsBinary(n.op) ? v[n.b] : nullptr;
  switch (n.op) {
    case ir::ExprOp::kLoad:
      return load(n.access);
    case ir::ExprOp::kConst:
      return llvm::ConstantFP::get(type, n.value);
    case ir::ExprOp::kAcc:
      return acc;
    case ir::ExprOp::kAdd:
      return b.CreateFAdd(a, c);
    case ir::ExprOp::kSub:
      return b.CreateFSub(a, c);
    case ir::ExprOp::kMul:
      return b.CreateFMul(a, c);
    case ir::ExprOp::kDiv:
      return b.CreateFDiv(a, c);
    case ir::ExprOp::kMax:
      return EmitMax(b, a, c);
    case ir::ExprOp::kMin:
      return EmitMin(b, a, c);
    case ir::ExprOp::kNeg:
      return b.CreateFNeg(a);
    case ir::ExprOp::kAbs:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
    case ir::ExprOp::kExp:
      return EmitExp(b, a);
    case ir::ExprOp::kLog:
      return EmitLog(b, a);
    case ir::ExprOp::kSqrt:
      return EmitSqrt(b, a);
    case ir::ExprOp::kRsqrt:
      return EmitRsqrt(b, a);
    case ir::ExprOp::kTanh:
      return EmitTanh(b, a);
    case ir::ExprOp::kSigmoid:
      return EmitSigmoid(b, a);
    case ir::ExprOp::kRelu: {
      // x < 0 ? 0 : x  (keeps NaN)
      llvm::Value* zero = llvm::ConstantFP::get(type, 0.0);
      return b.CreateSelect(b.CreateFCmpOLT(a, zero), zero, a);
    }
    case ir::ExprOp::kGeluTanh:
      return EmitGeluTanh(b, a);
    case ir::ExprOp::kGeluErf:
      return EmitGeluErf(b, a);
    case ir::ExprOp::kSilu:
      return EmitSilu(b, a);
    case ir::ExprOp::kErf:
      return EmitErf(b, a);
  }
  return nullptr;
}

}  // namespace

std::vector<llvm::Value*> EmitProgram(llvm::IRBuilderBase& b,
                                      const std::vector<ir::ExprNode>& program,
                                      std::span<const int> roots, llvm::Type* type,
                                      const LoadFn& load, llvm::Value* acc) {
  const int n = static_cast<int>(program.size());
  std::vector<bool> needed(n, false);
  for (int r : roots) needed[r] = true;
  for (int i = n - 1; i >= 0; --i) {
    if (!needed[i] || IsLeaf(program[i].op)) continue;
    if (program[i].a >= 0) needed[program[i].a] = true;
    if (ir::IsBinary(program[i].op) && program[i].b >= 0) needed[program[i].b] = true;
  }
  std::vector<llvm::Value*> values(n, nullptr);
  for (int i = 0; i < n; ++i) {
    if (needed[i]) values[i] = EmitNode(b, program[i], type, values, load, acc);
  }
  return values;
}

}  // namespace pto::jit
