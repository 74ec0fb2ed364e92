// Part of the differentiation pass: the sum of two cotangents that are concats of pieces along
// one axis, most of them zeros, as one concat. The cotangent of a slice is the slice's
// cotangent between zeros; a value sliced into parts (q, k and v of one projection) gets one
// such concat per part, and their sum, written as adds, would fill and add whole buffers of
// zeros. Where no nonzero piece of one overlaps a nonzero piece of the other, the sum is the
// concat of the nonzero pieces with zeros in the gaps: no add, and the pieces can be computed
// straight into their windows of the result.
#ifndef PTO_JIT_PASSES_SUM_PADDED_COTANGENTS_H_
#define PTO_JIT_PASSES_SUM_PADDED_COTANGENTS_H_

#include "ops/graph_builder.h"

namespace pto::jit {

// x + y as one concat (appended to `b`'s graph) when both are concats along the same axis with
// constant piece sizes whose nonzero pieces do not overlap; -1 otherwise. A zero piece is a
// broadcast of the constant 0.
int SumPaddedCotangents(ops::GraphBuilder& b, int x, int y);

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_SUM_PADDED_COTANGENTS_H_
