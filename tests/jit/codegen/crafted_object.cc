#include "crafted_object.h"

#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "device/device_info.h"
#include "jit/codegen/codegen_target.h"
#include "jit/orc/object_code.h"
#include "jit/orc/target_machine.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

namespace pto::jit::testing {

absl::StatusOr<std::string> CraftObject(const std::string& symbol, const CraftedObject& extras) {
  const CodegenTarget target = CodegenTarget::FromDevice(device::DetectHost());
  InitializeNativeTargetOnce();
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = CreateTargetMachine(target);
  if (!tm.ok()) return tm.status();
  llvm::LLVMContext context;
  llvm::Module module(symbol, context);
  module.setTargetTriple(target.triple);
  llvm::IRBuilder<> b(context);
  llvm::Type* ptr = b.getPtrTy();
  auto* fn =
      llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, ptr}, false),
                             llvm::Function::ExternalLinkage, symbol, module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  llvm::Value* buffers = b.CreateLoad(ptr, fn->getArg(0));
  llvm::Value* out = b.CreateLoad(ptr, buffers);
  b.CreateStore(llvm::ConstantFP::get(b.getFloatTy(), 1.0), out);
  if (!extras.call.empty()) {
    llvm::FunctionCallee callee = module.getOrInsertFunction(
        extras.call,
        llvm::FunctionType::get(b.getVoidTy(), {ptr, b.getInt32Ty(), b.getInt64Ty()}, false));
    llvm::Value* n = b.CreateMul(b.CreateLoad(b.getInt64Ty(), fn->getArg(1)), b.getInt64(4));
    b.CreateCall(callee, {out, b.getInt32(0), n});
  }
  if (extras.global_data || extras.thread_local_data) {
    auto* counter = new llvm::GlobalVariable(
        module, b.getInt64Ty(), false, llvm::GlobalValue::ExternalLinkage, b.getInt64(0),
        extras.thread_local_data ? "pto_crafted_tls" : "pto_crafted_counter", nullptr,
        extras.thread_local_data ? llvm::GlobalValue::GeneralDynamicTLSModel
                                 : llvm::GlobalValue::NotThreadLocal);
    b.CreateStore(b.getInt64(1), counter);
  }
  b.CreateRetVoid();
  if (!extras.also_define.empty()) {
    auto* other =
        llvm::Function::Create(llvm::FunctionType::get(ptr, {ptr, ptr, b.getInt64Ty()}, false),
                               llvm::Function::ExternalLinkage, extras.also_define, module);
    llvm::IRBuilder<> ob(llvm::BasicBlock::Create(context, "entry", other));
    ob.CreateRet(other->getArg(0));
  }
  if (extras.initializer) {
    auto* ctor = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), false),
                                        llvm::Function::InternalLinkage, "crafted_ctor", module);
    llvm::IRBuilder<> cb(llvm::BasicBlock::Create(context, "entry", ctor));
    cb.CreateRetVoid();
    llvm::appendToGlobalCtors(module, ctor, 0);
  }
  return EmitObject(module, **tm);
}

absl::StatusOr<std::string> WithRelocationOffset(std::string object, const std::string& section,
                                                 uint64_t offset) {
  llvm::MemoryBufferRef ref(llvm::StringRef(object.data(), object.size()), "crafted");
  auto file = llvm::object::ELF64LEObjectFile::create(ref);
  if (!file) {
    llvm::consumeError(file.takeError());
    return absl::InvalidArgumentError("not an ELF64 object");
  }
  const auto& ef = file->getELFFile();
  auto sections = ef.sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    return absl::InvalidArgumentError("no sections");
  }
  for (const auto& sec : *sections) {
    if (sec.sh_type != llvm::ELF::SHT_RELA || sec.sh_info >= sections->size()) continue;
    auto name = ef.getSectionName((*sections)[sec.sh_info]);
    if (!name || *name != section || sec.sh_size < sizeof(llvm::ELF::Elf64_Rela)) {
      if (!name) llvm::consumeError(name.takeError());
      continue;
    }
    // r_offset is the first field of an Elf64_Rela (little-endian).
    for (int i = 0; i < 8; ++i) {
      object[sec.sh_offset + i] = static_cast<char>((offset >> (8 * i)) & 0xff);
    }
    return object;
  }
  return absl::NotFoundError(absl::StrCat("no relocations of ", section));
}

}  // namespace pto::jit::testing
