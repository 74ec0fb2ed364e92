#include "jit/codegen/emit_expr.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "jit/codegen/vector_math.h"

namespace pto::jit {
namespace {

// The operand dtypes `n` needs (its own operands are earlier nodes).
absl::Status CheckDTypes(const std::vector<ir::ExprNode>& program, const ir::ExprNode& n) {
  const ir::DType da = program[n.a].dtype;
  auto mismatch = [&](const char* which, ir::DType got, ir::DType want) {
    return absl::InvalidArgumentError(absl::StrCat("operand ", which, " is ",
                                                   std::string(ir::DTypeName(got)), ", expected ",
                                                   std::string(ir::DTypeName(want))));
  };
  if (ir::IsComparison(n.op)) {
    if (n.dtype != ir::DType::kF32) return mismatch("result", n.dtype, ir::DType::kF32);
    if (program[n.b].dtype != da) return mismatch("b", program[n.b].dtype, da);
    return absl::OkStatus();
  }
  if (n.op == ir::ExprOp::kCast) return absl::OkStatus();
  if (n.op == ir::ExprOp::kSelect) {
    if (program[n.b].dtype != n.dtype) return mismatch("b", program[n.b].dtype, n.dtype);
    if (program[n.c].dtype != n.dtype) return mismatch("c", program[n.c].dtype, n.dtype);
    return absl::OkStatus();
  }
  if (da != n.dtype) return mismatch("a", da, n.dtype);
  if (ir::IsBinary(n.op) && program[n.b].dtype != n.dtype) {
    return mismatch("b", program[n.b].dtype, n.dtype);
  }
  const bool integer_op = n.op == ir::ExprOp::kAdd || n.op == ir::ExprOp::kSub ||
                          n.op == ir::ExprOp::kMul || n.op == ir::ExprOp::kMax ||
                          n.op == ir::ExprOp::kMin || n.op == ir::ExprOp::kNeg ||
                          n.op == ir::ExprOp::kAbs;
  if (n.dtype == ir::DType::kI32 && !integer_op) {
    return absl::InvalidArgumentError("takes f32 operands only");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateProgram(const std::vector<ir::ExprNode>& program, int num_accesses,
                             bool acc_allowed, const std::string& what, int domain_rank) {
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
      case ir::ExprOp::kGather:
        if (n.access < 0 || n.access >= num_accesses) {
          return bad(absl::StrCat("access ", n.access, " out of range [0, ", num_accesses, ")"));
        }
        if (n.a < 0 || n.a >= idx) return bad("operand a must be an earlier node");
        if (program[n.a].dtype != ir::DType::kI32) return bad("the index (operand a) is i32");
        if (n.dtype != ir::DType::kF32) return bad("gather is f32");
        break;
      case ir::ExprOp::kAcc:
        if (!acc_allowed) return bad("kAcc is not defined in this program");
        break;
      case ir::ExprOp::kIota:
        if (n.axis < 0 || n.axis >= std::max(1, domain_rank)) {
          return bad(absl::StrCat("axis ", n.axis, " is not a dim of the domain (rank ",
                                  domain_rank, ")"));
        }
        if (n.dtype != ir::DType::kI32) return bad("iota is i32");
        break;
      default: {
        if (n.a < 0 || n.a >= idx) return bad("operand a must be an earlier node");
        if (ir::IsBinary(n.op) && (n.b < 0 || n.b >= idx)) {
          return bad("operand b must be an earlier node");
        }
        if (n.op == ir::ExprOp::kSelect && (n.b < 0 || n.b >= idx || n.c < 0 || n.c >= idx)) {
          return bad("operands b and c must be earlier nodes");
        }
        if (absl::Status s = CheckDTypes(program, n); !s.ok()) return bad(std::string(s.message()));
        break;
      }
    }
    if (n.dtype != ir::DType::kF32 && n.dtype != ir::DType::kI32) {
      return bad(absl::StrCat("dtype ", std::string(ir::DTypeName(n.dtype)), " is not compiled"));
    }
  }
  return absl::OkStatus();
}

namespace {

bool IsLeaf(ir::ExprOp op) {
  return op == ir::ExprOp::kLoad || op == ir::ExprOp::kConst || op == ir::ExprOp::kAcc ||
         op == ir::ExprOp::kIota;
}

// The i32 type of the same width as `f32` (float or <N x float>).
llvm::Type* IntTypeLike(llvm::Type* f32) {
  llvm::Type* i32 = llvm::Type::getInt32Ty(f32->getContext());
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(f32)) {
    return llvm::FixedVectorType::get(i32, vt->getNumElements());
  }
  return i32;
}

llvm::Value* EmitComparison(llvm::IRBuilderBase& b, ir::ExprOp op, bool integer, llvm::Value* x,
                            llvm::Value* y, llvm::Type* f32) {
  llvm::Value* c = nullptr;
  switch (op) {
    case ir::ExprOp::kEq:
      c = integer ? b.CreateICmpEQ(x, y) : b.CreateFCmpOEQ(x, y);
      break;
    case ir::ExprOp::kNe:
      c = integer ? b.CreateICmpNE(x, y) : b.CreateFCmpUNE(x, y);
      break;
    case ir::ExprOp::kLt:
      c = integer ? b.CreateICmpSLT(x, y) : b.CreateFCmpOLT(x, y);
      break;
    case ir::ExprOp::kLe:
      c = integer ? b.CreateICmpSLE(x, y) : b.CreateFCmpOLE(x, y);
      break;
    case ir::ExprOp::kGt:
      c = integer ? b.CreateICmpSGT(x, y) : b.CreateFCmpOGT(x, y);
      break;
    default:
      c = integer ? b.CreateICmpSGE(x, y) : b.CreateFCmpOGE(x, y);
      break;
  }
  return b.CreateSelect(c, llvm::ConstantFP::get(f32, 1.0), llvm::ConstantFP::get(f32, 0.0));
}

// i32 forms of the arithmetic ops: wrapping two's complement (no nsw/nuw flags), abs(INT_MIN)
// = INT_MIN.
llvm::Value* EmitIntNode(llvm::IRBuilderBase& b, ir::ExprOp op, llvm::Value* a, llvm::Value* c) {
  switch (op) {
    case ir::ExprOp::kAdd:
      return b.CreateAdd(a, c);
    case ir::ExprOp::kSub:
      return b.CreateSub(a, c);
    case ir::ExprOp::kMul:
      return b.CreateMul(a, c);
    case ir::ExprOp::kMax:
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, c);
    case ir::ExprOp::kMin:
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, c);
    case ir::ExprOp::kNeg:
      return b.CreateSub(llvm::Constant::getNullValue(a->getType()), a);
    case ir::ExprOp::kAbs:
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a, b.getFalse());
    default:
      return nullptr;  // refused by ValidateProgram
  }
}

llvm::Value* EmitNode(llvm::IRBuilderBase& b, const std::vector<ir::ExprNode>& program,
                      const ir::ExprNode& n, llvm::Type* type, const std::vector<llvm::Value*>& v,
                      const LoadFn& load, llvm::Value* acc, const IndexFn& index,
                      const GatherFn& gather) {
  llvm::Value* a = IsLeaf(n.op) ? nullptr : v[n.a];
  llvm::Value* c = ir::IsBinary(n.op) ? v[n.b] : nullptr;
  llvm::Type* itype = IntTypeLike(type);
  const bool operand_i32 = !IsLeaf(n.op) && program[n.a].dtype == ir::DType::kI32;
  if (ir::IsComparison(n.op)) return EmitComparison(b, n.op, operand_i32, a, c, type);
  if (n.dtype == ir::DType::kI32 && ir::IsBinary(n.op)) return EmitIntNode(b, n.op, a, c);
  switch (n.op) {
    case ir::ExprOp::kLoad:
      return load(n.access);
    case ir::ExprOp::kConst:
      if (n.dtype == ir::DType::kI32) {
        return llvm::ConstantInt::get(itype, static_cast<uint64_t>(static_cast<int64_t>(n.ivalue)),
                                      /*isSigned=*/true);
      }
      return llvm::ConstantFP::get(type, n.value);
    case ir::ExprOp::kAcc:
      return acc;
    case ir::ExprOp::kIota:
      return index(n.axis);
    case ir::ExprOp::kGather:
      return gather(n.access, a);
    case ir::ExprOp::kSelect: {
      llvm::Value* cond = operand_i32 ? b.CreateICmpNE(a, llvm::Constant::getNullValue(itype))
                                      : b.CreateFCmpUNE(a, llvm::ConstantFP::get(type, 0.0));
      return b.CreateSelect(cond, v[n.b], v[n.c]);
    }
    case ir::ExprOp::kCast:
      if (operand_i32 == (n.dtype == ir::DType::kI32)) return a;
      if (operand_i32) return b.CreateSIToFP(a, type);
      // Saturating: NaN gives 0, values outside the i32 range clamp (plain fptosi is poison).
      return b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {itype, type}, {a});
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
      return n.dtype == ir::DType::kI32 ? EmitIntNode(b, n.op, a, nullptr) : b.CreateFNeg(a);
    case ir::ExprOp::kAbs:
      if (n.dtype == ir::DType::kI32) return EmitIntNode(b, n.op, a, nullptr);
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
    case ir::ExprOp::kGeluErfGrad:
      return EmitGeluErfGrad(b, a);
    default:
      return nullptr;  // comparisons: above
  }
}

}  // namespace

std::vector<llvm::Value*> EmitProgram(llvm::IRBuilderBase& b,
                                      const std::vector<ir::ExprNode>& program,
                                      std::span<const int> roots, llvm::Type* type,
                                      const LoadFn& load, llvm::Value* acc, const IndexFn& index,
                                      const GatherFn& gather) {
  const int n = static_cast<int>(program.size());
  std::vector<bool> needed(n, false);
  for (int r : roots) needed[r] = true;
  for (int i = n - 1; i >= 0; --i) {
    if (!needed[i] || IsLeaf(program[i].op)) continue;
    if (program[i].a >= 0) needed[program[i].a] = true;
    if (ir::IsBinary(program[i].op) && program[i].b >= 0) needed[program[i].b] = true;
    if (program[i].op == ir::ExprOp::kSelect) {
      needed[program[i].b] = true;
      needed[program[i].c] = true;
    }
  }
  std::vector<llvm::Value*> values(n, nullptr);
  for (int i = 0; i < n; ++i) {
    if (needed[i]) {
      values[i] = EmitNode(b, program, program[i], type, values, load, acc, index, gather);
    }
  }
  return values;
}

}  // namespace pto::jit
