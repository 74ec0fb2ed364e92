// How large a fusion group may grow (jit/passes/fusion_groups.h). Policy, kept apart from the
// pass: the numbers and why.
//
// A fusion group becomes one kernel, and its expression one loop body: one basic block that
// LLVM's instruction scheduler and register allocator work on as a whole, in time that grows
// faster than the block (a chain of thousands of exps in one kernel took minutes to compile).
// Capping a group's cost bounds every kernel's compile time, so a program's compile time grows
// linearly with its node count. The cap is far above the groups of real programs (a
// transformer block's largest fuses about ten ops), so it changes nothing for them; the
// measurements that chose it are in docs/performance.md.
#ifndef PTO_JIT_PASSES_FUSION_POLICY_H_
#define PTO_JIT_PASSES_FUSION_POLICY_H_

#include <cstdint>

namespace pto::jit {

// The most a fusion group's expression may cost, in units of one cheap op (an add, a load, a
// constant).
inline constexpr int kMaxFusionGroupCost = 256;

// What one transcendental (exp, log, tanh, sigmoid, gelu, silu: a polynomial approximation of
// tens of instructions) costs in those units.
inline constexpr int kTranscendentalCost = 4;

// What one more store costs in a kernel that stores several values (the copies of a concat's
// inputs grouped into one kernel): besides its own instructions, each store is a memory
// dependency that the scheduler orders against every other memory access of the loop body.
inline constexpr int kStoreCost = 8;

// A matmul's epilogue may run past a value other kernels read too (a linear layer's output
// that both its activation and the backward pass read), storing it beside the group's root,
// when K is a constant of at most this: a kernel with two stores runs K whole (no K blocks),
// which this K fits in one block of the default configs anyway.
inline constexpr int64_t kMaxStoredEpilogueK = 256;

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_FUSION_POLICY_H_
