// The limits every program is held to, whether it comes from a GraphDef or from tracing a C++
// lambda. They bound the work and memory any input can cause: each count is checked before
// anything proportional to it is allocated, and a violation is InvalidArgument naming the limit
// and the value (jit/graph/check_limits.h). docs/architecture.md lists them.
//
// This file is policy: the numbers and why. The checks live in check_limits.cc.
#ifndef PTO_JIT_GRAPH_LIMITS_H_
#define PTO_JIT_GRAPH_LIMITS_H_

#include <cstdint>

namespace pto::graph {

// Inputs and outputs of one program: the plan binds them through fixed arrays of this size on
// the call path (no allocation per call).
inline constexpr int64_t kMaxInputs = 64;
inline constexpr int64_t kMaxOutputs = 64;

// Nodes of one program. Every pass is linear (or n log n) in the node count; this bounds the
// memory a graph takes (a few hundred bytes a node) and the size of its text form.
inline constexpr int64_t kMaxNodes = int64_t{1} << 20;

// Symbolic dims of one program (a plan's symbol array, jit::kMaxSymbols in jit/plan.h, has
// room for twice this many).
inline constexpr int64_t kMaxSymbols = 32;

// Rank of every value (pto::kMaxRank in the public API), and so the length of a transpose's
// permutation and of a reshape's requested shape.
inline constexpr int64_t kMaxRank = 8;

// A dim is a polynomial over the symbols (`batch*seq + 3`). Multiplying dims multiplies their
// term counts and adds their degrees, so both are bounded per dim, and the product of a
// shape's term counts (an upper bound on the terms of its element count) per shape.
inline constexpr int64_t kMaxDimTerms = 16;
inline constexpr int64_t kMaxTermDegree = 8;
inline constexpr int64_t kMaxShapeTerms = 256;

// Elements of one value, counting every symbol as 1 (for a static shape: its element count).
// Bounds each coefficient of any product of dims, so the shape arithmetic cannot overflow, and
// static sizes to what an address space can hold (2^48 f32 values are 1 PiB).
inline constexpr int64_t kMaxStaticElements = int64_t{1} << 48;

// Inputs of one concat. Each input is a copy into the result; they are lowered in groups
// (jit/passes/build_tile_graph.cc), so the compile time grows with this count.
inline constexpr int64_t kMaxConcatInputs = 16384;

// Bytes of a GraphDef text file: about 200 bytes a node in the form pto writes.
inline constexpr int64_t kMaxGraphTextBytes = int64_t{256} << 20;

}  // namespace pto::graph

#endif  // PTO_JIT_GRAPH_LIMITS_H_
