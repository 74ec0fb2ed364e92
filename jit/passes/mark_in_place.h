// Pass (level 4, execution graph): decides which kernel outputs are written in place over a
// temporary input (ir::KernelCall::in_place), so that plan_buffers gives both one arena slot.
//
// The aliasing contract (jit/kernel_abi.h): a kernel output may share memory with an input
// only when the pair is listed here. A pair {output O, input I} of call c is listed when
//   - both are temps, I is last used by c and O is first written by c;
//   - the kernel is elementwise or a row op (softmax, layernorm, ...): codegen evaluates all
//     loads of a point (for a row op: the whole row, in its statistics passes, and again at the
//     point in the final pass) before the stores of that point. Never a matmul (A and B are
//     read at other indices; with K blocking the output holds partial sums before the epilogue
//     reads its operands) and never a reduction (its output index is not its input's);
//   - O has exactly one store and no loads, and every access to I is that store's access
//     (same offset, strides and dtype) with dense row-major strides over the domain (an
//     injective index): each element of I is read only at the point that overwrites it, so a
//     transpose, a broadcast or any other index of I rules the pair out;
//   - every load of I (in `output`, and in `input` for a row op) feeds the stored value, so the
//     store depends on those loads and cannot be moved before them (codegen's alias scopes still
//     tell LLVM the buffers are distinct; the data dependence keeps the order).
#ifndef PTO_JIT_PASSES_MARK_IN_PLACE_H_
#define PTO_JIT_PASSES_MARK_IN_PLACE_H_

#include "jit/ir/tile_graph.h"

namespace pto::jit {

void MarkInPlace(ir::TileGraph& tiles);

// The kernel's half of the rules above, liveness and buffer kinds aside: whether `call` may
// write `store` over its kernel slot `in` (an elementwise kernel or row op; the stored slot has
// that one store and no other access; `in` is never stored to, is bound to one slot only, and
// is read only at the stored point, before the store, by loads that feed it).
// plan_in_place_outputs uses it for a Function output written over a donated input.
bool KernelMayWriteOver(const ir::KernelCall& call, const ir::Store& store, int in);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_MARK_IN_PLACE_H_
