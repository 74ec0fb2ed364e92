// Bounds checks of checked kernels (CodegenOptions::bounds_checks; internal to jit/codegen).
// Every load and store of a buffer slot, and of the per-thread scratch, is preceded by a test
// of the elements it touches against the slot's extent (ir::Kernel::buffer_extents, evaluated
// from args->symbols at the function's entry; the scratch: KernelScratchBytes). A failed test
// branches to one cold block per function that calls the bounds-fault handler
// (bounds_fault.h) with the kernel's name, the buffer, the elements and the extent.
#ifndef PTO_JIT_CODEGEN_EMIT_BOUNDS_CHECK_H_
#define PTO_JIT_CODEGEN_EMIT_BOUNDS_CHECK_H_

#include <string>
#include <vector>

#include "llvm/IR/IRBuilder.h"

namespace pto::jit {

struct EmitContext;

class BoundsChecks {
 public:
  // The scratch's slot number in Check.
  static constexpr int kScratch = -1;

  // Evaluates the extents at the builder's position (the entry of ec.fn, after its symbols are
  // loaded).
  explicit BoundsChecks(EmitContext& ec);

  // Traps unless the elements first + lane * stride (i64) for lanes [0, width), only those set
  // in `mask` (<width x i1>) when it is given, lie inside `slot`. `stride` null: 1. `store`
  // says which kind of access the message names. The builder continues after the test.
  void Check(int slot, llvm::Value* first, llvm::Value* stride, int width, llvm::Value* mask,
             bool store);
  // Traps unless the `count` (i64, may be 0) elements from `first` lie inside `slot`.
  void CheckCount(int slot, llvm::Value* first, llvm::Value* count, bool store);

 private:
  // The fault unless first and last lie inside the slot (so does every element between them).
  void CheckRange(int slot, llvm::Value* first, llvm::Value* last, bool store);
  // The fault if a set lane of `indices` (<width x i64>) lies outside the slot.
  void CheckLanes(int slot, llvm::Value* indices, llvm::Value* mask, bool store);
  // Branches to the fault block when `bad`, with these arguments; continues in a new block.
  void BranchToFault(llvm::Value* bad, int slot, llvm::Value* first, llvm::Value* last,
                     bool store);
  // The function's fault block (made at the first use): phis of the handler's arguments, the
  // call, unreachable.
  llvm::BasicBlock* Fault();
  // The handler's arguments on the edge from `from` to the fault block.
  void AddFaultEdge(llvm::BasicBlock* from, int slot, llvm::Value* first, llvm::Value* last,
                    bool store);
  llvm::Value* Extent(int slot) const;
  // A constant C string in the module, made once per name.
  llvm::Constant* String(const std::string& global, const std::string& text) const;

  EmitContext& ec_;
  std::vector<llvm::Value*> extents_;     // per slot
  llvm::Value* scratch_extent_ = nullptr;  // elements of the scratch
  llvm::BasicBlock* fault_ = nullptr;      // made at the first check
  llvm::PHINode* fault_buffer_ = nullptr;
  llvm::PHINode* fault_first_ = nullptr;
  llvm::PHINode* fault_last_ = nullptr;
  llvm::PHINode* fault_extent_ = nullptr;
  llvm::PHINode* fault_store_ = nullptr;
};

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_EMIT_BOUNDS_CHECK_H_
