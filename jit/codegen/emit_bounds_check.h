// Bounds checks of checked kernels (CodegenOptions::bounds_checks; internal to jit/codegen).
// Every load and store of a buffer slot, and of the per-thread scratch, is preceded by a test
// of the elements it touches against the slot's extent (ir::Kernel::buffer_extents, evaluated
// from args->symbols at the function's entry; the scratch: KernelScratchBytes). A failed test
// branches to one cold block per function that calls the bounds-fault handler
// (bounds_fault.h) with the kernel's name, the buffer, the elements and the extent.
// Tests made together (a group: the hoisted checks of a loop, of a tile's results) share one
// branch; the first failing one is picked on the way to the fault.
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

  // Until EndGroup, tests are gathered; EndGroup emits one branch on any of them. The accesses
  // they guard must come after EndGroup. Groups do not nest.
  void BeginGroup() { grouping_ = true; }
  void EndGroup();

 private:
  // One failed-test condition and what the fault reports for it. For lanes, the index is the
  // first lane of `lane_indices` set in `lane_outside`, found on the way to the fault.
  struct Test {
    llvm::Value* bad = nullptr;
    int slot = 0;
    llvm::Value* first = nullptr;
    llvm::Value* last = nullptr;
    llvm::Value* lane_indices = nullptr;
    llvm::Value* lane_outside = nullptr;
    bool store = false;
  };
  void Add(Test test);
  // Branches to the fault when any of `tests` failed; continues in a new block.
  void Branch(const std::vector<Test>& tests);
  llvm::Value* Extent(int slot) const;
  // The buffer's name in messages, a C string constant of the module.
  llvm::Constant* Name(int slot) const;
  // A constant C string in the module, made once per name.
  llvm::Constant* String(const std::string& global, const std::string& text) const;
  // The function's fault block (made at the first use): phis of the handler's arguments, the
  // call, unreachable.
  llvm::BasicBlock* Fault();

  EmitContext& ec_;
  std::vector<llvm::Value*> extents_;      // per slot
  llvm::Value* scratch_extent_ = nullptr;  // elements of the scratch
  bool grouping_ = false;
  std::vector<Test> group_;
  llvm::BasicBlock* fault_ = nullptr;  // made at the first check
  llvm::PHINode* fault_buffer_ = nullptr;
  llvm::PHINode* fault_first_ = nullptr;
  llvm::PHINode* fault_last_ = nullptr;
  llvm::PHINode* fault_extent_ = nullptr;
  llvm::PHINode* fault_store_ = nullptr;
};

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_EMIT_BOUNDS_CHECK_H_
