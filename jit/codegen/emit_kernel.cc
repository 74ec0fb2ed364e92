#include "jit/codegen/emit_kernel.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "jit/codegen/emit_access.h"
#include "jit/codegen/emit_context.h"
#include "jit/codegen/emit_kinds.h"
#include "jit/codegen/matmul_scratch.h"
#include "jit/kernel_abi.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace pto::jit {
namespace {

llvm::Function* CreateKernelFunction(const ir::Kernel& kernel, const CodegenTarget& target,
                                     const CodegenOptions& options, int lanes,
                                     llvm::Module& module) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr, ptr, ptr}, false);
  llvm::Function* fn =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, kernel.name, module);
  SetCodegenAttributes(target, lanes, *fn);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr(llvm::Attribute::NoSync);
  fn->addFnAttr(llvm::Attribute::NoFree);
  // A checked kernel may end in the bounds-fault handler, which does not return.
  if (!options.bounds_checks) fn->addFnAttr(llvm::Attribute::WillReturn);
  const char* names[] = {"args", "lo", "hi", "scratch"};
  for (unsigned i = 0; i < 4; ++i) {
    fn->getArg(i)->setName(names[i]);
    fn->addParamAttr(i, llvm::Attribute::NoCapture);
    fn->addParamAttr(i, llvm::Attribute::NoAlias);
    if (i < 3) {
      fn->addParamAttr(i, llvm::Attribute::ReadOnly);
      fn->addParamAttr(i, llvm::Attribute::NoUndef);
    }
  }
  return fn;
}

}  // namespace

int64_t KernelScratchBytes(const ir::Kernel& kernel) {
  switch (kernel.kind) {
    case ir::KernelKind::kMatMul:
      return MatMulScratchBytes(kernel);
    case ir::KernelKind::kRowOp:
      return RowOpScratchBytes(kernel);
    case ir::KernelKind::kElementwise:
    case ir::KernelKind::kReduce:
    case ir::KernelKind::kScatterAdd:
      return 0;
  }
  return 0;
}

void SetCodegenAttributes(const CodegenTarget& target, int lanes, llvm::Function& fn) {
  const std::string width = std::to_string(std::max(target.vector_bits, lanes * 32));
  fn.addFnAttr("target-cpu", target.cpu_name);
  fn.addFnAttr("target-features", target.features);
  fn.addFnAttr("prefer-vector-width", width);
  fn.addFnAttr("min-legal-vector-width", width);
  // AVX2's rcpps is 12 bits (one Newton step leaves about 2^-22), and its divider is fast.
  fn.addFnAttr("reciprocal-estimates", target.isa == device::Isa::kAvx512 ? "vec-divf:1" : "none");
}

absl::StatusOr<std::unique_ptr<llvm::Module>> EmitKernel(const ir::Kernel& kernel,
                                                         const CodegenTarget& target,
                                                         llvm::LLVMContext& context) {
  return EmitKernel(kernel, target, CodegenOptions{}, context);
}

absl::StatusOr<std::unique_ptr<llvm::Module>> EmitKernel(const ir::Kernel& kernel,
                                                         const CodegenTarget& target,
                                                         const CodegenOptions& options,
                                                         llvm::LLVMContext& context) {
  absl::Status valid = ValidateKernel(kernel);
  if (valid.ok() && options.bounds_checks) valid = ValidateBufferExtents(kernel);
  if (!valid.ok()) return valid;
  const int lanes =
      kernel.config.vector_width > 0 ? kernel.config.vector_width : std::max(1, target.f32_lanes());
  if (kernel.kind == ir::KernelKind::kMatMul && kernel.b_packed >= 0 &&
      kernel.b_packed_block != ir::MatMulColumnBlock(kernel.config, lanes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", kernel.name, ": B is prepacked in blocks of ", kernel.b_packed_block,
        " columns, but the tile config takes ", std::max(1, kernel.config.nr_vectors), " x ", lanes,
        " (nr_vectors x vector width)"));
  }
  auto module = std::make_unique<llvm::Module>(kernel.name, context);
  module->setTargetTriple(target.triple);
  module->setSourceFileName(absl::StrCat("pto-generated/", kernel.name));
  llvm::NamedMDNode* marker = module->getOrInsertNamedMetadata("pto.generated");
  marker->addOperand(llvm::MDNode::get(
      context, {llvm::MDString::get(context, absl::StrCat("pto kernel abi v", kKernelAbiVersion,
                                                          "; generated code, do not edit"))}));

  llvm::Function* fn = CreateKernelFunction(kernel, target, options, lanes, *module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", fn));
  EmitContext ec(kernel, target, options, lanes, *module, fn, b);
  for (int d = 0; d < 2; ++d) {
    ec.lo[d] = b.CreateAlignedLoad(
        ec.I64(), b.CreateConstInBoundsGEP1_64(ec.I64(), fn->getArg(1), d), llvm::Align(8));
    ec.hi[d] = b.CreateAlignedLoad(
        ec.I64(), b.CreateConstInBoundsGEP1_64(ec.I64(), fn->getArg(2), d), llvm::Align(8));
  }
  ec.LoadEntry(fn->getArg(0));
  AccessEmitter access(ec);

  absl::Status s;
  switch (kernel.kind) {
    case ir::KernelKind::kElementwise:
      s = EmitElementwise(ec, access);
      break;
    case ir::KernelKind::kReduce:
      s = EmitReduce(ec, access);
      break;
    case ir::KernelKind::kRowOp:
      s = EmitRowOp(ec, access);
      break;
    case ir::KernelKind::kMatMul:
      s = EmitMatMul(ec, access);
      break;
    case ir::KernelKind::kScatterAdd:
      s = EmitScatterAdd(ec, access);
      break;
  }
  if (!s.ok()) return s;
  b.CreateRetVoid();

  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyFunction(*fn, &os)) {
    return absl::InternalError(
        absl::StrCat("codegen produced invalid IR for kernel '", kernel.name, "': ", os.str()));
  }
  return module;
}

}  // namespace pto::jit
