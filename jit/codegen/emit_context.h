// State shared by the emitters of one kernel function (internal to jit/codegen).
#ifndef PTO_JIT_CODEGEN_EMIT_CONTEXT_H_
#define PTO_JIT_CODEGEN_EMIT_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "jit/codegen/codegen_target.h"
#include "jit/ir/tile_ir.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace pto::jit {

class BoundsChecks;

struct EmitContext {
  EmitContext(const ir::Kernel& kernel, const CodegenTarget& target, const CodegenOptions& options,
              int lanes, llvm::Module& module, llvm::Function* fn, llvm::IRBuilder<>& b);
  ~EmitContext();

  const ir::Kernel& kernel;
  const CodegenTarget& target;
  const CodegenOptions& options;
  const int lanes;  // f32 lanes per vector (>= 1)
  llvm::Module& module;
  llvm::LLVMContext& ctx;
  llvm::Function* fn;
  llvm::IRBuilder<>& b;

  // Entry values: tile range and argument arrays.
  llvm::Value* lo[2] = {nullptr, nullptr};
  llvm::Value* hi[2] = {nullptr, nullptr};
  llvm::Value* buffers_array = nullptr;
  llvm::Value* symbols_array = nullptr;

  llvm::Type* F32() const { return b.getFloatTy(); }
  // The LLVM element type of f32 or i32 data.
  llvm::Type* ElementType(ir::DType dtype) const {
    return dtype == ir::DType::kI32 ? b.getInt32Ty() : b.getFloatTy();
  }
  llvm::Type* I64() const { return b.getInt64Ty(); }
  // float for width 1, <width x float> otherwise.
  llvm::Type* VecType(int width) const;
  llvm::Value* I64Const(int64_t v) const { return b.getInt64(static_cast<uint64_t>(v)); }
  llvm::Value* F32Const(int width, double v) const;
  // <width x i64> constant 0, 1, ..., width - 1.
  llvm::Value* LaneIndices(int width) const;
  // <width x i1>: lanes [0, count) set (count an i64 value; lanes past it clear).
  llvm::Value* LaneMask(llvm::Value* count, int width) const;
  // The same, made here once: on AVX-512 LLVM keeps it in a mask register across the loops
  // that use it.
  llvm::Value* HeldLaneMask(llvm::Value* count, int width);
  // The count a mask of LaneMask was made from (null for any other value).
  llvm::Value* LaneCount(llvm::Value* mask) const;
  // A load of `type` at `ptr` (4-byte aligned), or with `mask` (may be null) a masked load whose
  // masked-off lanes are 0; and the matching store.
  llvm::Value* LoadLanes(llvm::Type* type, llvm::Value* ptr, llvm::Value* mask) const;
  void StoreLanes(llvm::Value* value, llvm::Value* ptr, llvm::Value* mask) const;

  // Value of a symbolic expression; symbols are loaded at entry (see LoadSymbols).
  llvm::Value* Sym(const ir::SymExpr& e);
  // Loads args->symbols[id] for every symbol the kernel uses. Call in the entry block.
  void LoadSymbols();
  // Base pointer of buffer slot `slot` (loaded at entry on first use of BufferBases()).
  llvm::Value* Buffer(int slot) const { return buffers_[slot]; }
  void LoadBuffers();
  // The entry loads of a function whose first parameter is the kernel's args: the argument
  // arrays, LoadSymbols and LoadBuffers (and, for a checked kernel, the buffers' extents).
  void LoadEntry(llvm::Value* args);

  // Checked kernels (options.bounds_checks): whether this function tests its accesses, and the
  // test of one (BoundsChecks::Check; slot BoundsChecks::kScratch is the scratch). Check emits
  // nothing in an unchecked kernel.
  bool checked() const { return checks_ != nullptr; }
  void Check(int slot, llvm::Value* first, llvm::Value* stride, int width, llvm::Value* mask,
             bool store);
  // The same for the `count` (an i64 value, may be 0) elements from `first`.
  void CheckCount(int slot, llvm::Value* first, llvm::Value* count, bool store);
  // The checks made in body() share one branch (BoundsChecks::BeginGroup): body() must emit
  // checks only, not the accesses they guard. Just body() in an unchecked kernel.
  void CheckGroup(const std::function<void()>& body);

  // Alias-scope metadata: every buffer slot is its own scope (outputs never alias inputs).
  void AnnotateSlot(llvm::Instruction* inst, int slot) const;

  // An alloca in the entry block (promoted to SSA by the O2 pipeline).
  llvm::AllocaInst* EntryAlloca(llvm::Type* type, const char* name);
  // Loop metadata for loops that are already explicitly vectorized.
  llvm::MDNode* LoopMetadata(bool disable_unroll);
  // The same, with the loop unrolled `count` times (1: not unrolled).
  llvm::MDNode* UnrollMetadata(int count);

  // Unflattens `flat` into indices of `dims` (row-major): out[i] for dims[i].
  std::vector<llvm::Value*> Unflatten(llvm::Value* flat, const std::vector<llvm::Value*>& dims);

 private:
  std::unique_ptr<BoundsChecks> checks_;  // made by LoadEntry in checked kernels
  mutable std::map<llvm::Value*, llvm::Value*> lane_counts_;  // LaneMask's masks
  std::map<int, llvm::Value*> symbols_;
  std::vector<llvm::Value*> buffers_;
  std::vector<llvm::MDNode*> scope_lists_;
  std::vector<llvm::MDNode*> noalias_lists_;
};

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_EMIT_CONTEXT_H_
