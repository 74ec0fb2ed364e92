// Symbols derived from other dims (ir::DerivedSymbol): the start and length of a slice of a
// symbolic dim as shape expressions, and their values when a call binds its shapes.
//
// A slice [start, end) with step >= 1 of a dim of size D follows numpy at run time: a negative
// start or end counts from the end, both clamp to [0, D], and the length is
// max(0, ceil((end' - start') / step)). Where no clamping can happen for any size the dim's
// symbols may take (their ir::SymbolInfo ranges), start and length are polynomials of D (x[1:]
// of a dim >= 1 has length D - 1; x[-3:] of a dim >= 3 starts at D - 3 and has length 3).
// Otherwise each is a derived symbol, one per distinct (kind, dim, start, end, step), so slices
// with the same bounds of one dim have equal shapes. A start >= 0 is always the constant start:
// when it is past the end the length is 0 and the offset is never used.
#ifndef PTO_OPS_DERIVED_SYMBOLS_H_
#define PTO_OPS_DERIVED_SYMBOLS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "jit/ir/graph.h"
#include "jit/ir/sym_expr.h"

namespace pto::ops {

struct SymbolicSlice {
  ir::SymExpr start;  // index of the first element taken
  ir::SymExpr length;
};

// Start and length of the slice [start, end) with `step` (>= 1) of `dim`, whose symbols are
// entries of `symbols`. Appends the derived symbols it needs to `symbols` (or reuses equal
// ones), named after the slice: "rows[2:40:7]" (length), "rows[-3:].start".
SymbolicSlice ResolveSymbolicSlice(const ir::SymExpr& dim, int64_t start, int64_t end, int64_t step,
                                   std::vector<ir::SymbolInfo>& symbols);

// The start alone, for lowering a slice of a graph whose symbols ResolveSymbolicSlice made
// (possibly specialized since: narrower ranges, substituted dims). nullopt when the derived
// symbol it needs is not among `symbols`.
std::optional<ir::SymExpr> SymbolicSliceStart(const ir::SymExpr& dim, int64_t start, int64_t end,
                                              int64_t step,
                                              std::span<const ir::SymbolInfo> symbols);

// The value of `derived` given the values of the symbols its dim uses.
int64_t EvaluateDerivedSymbol(const ir::DerivedSymbol& derived, std::span<const int64_t> values);

// Sets values[s] for every derived symbol s, in id order, from the other values (the symbols
// an input dim binds, and derived symbols of smaller ids). Allocates nothing.
void BindDerivedSymbols(std::span<const ir::SymbolInfo> symbols, std::span<int64_t> values);

// Lower and upper bounds of a dim over the ranges of its symbols (interval arithmetic,
// saturating; the lower bound is at least 0, since dims are never negative).
struct DimRange {
  int64_t lo = 0, hi = 0;
};
DimRange RangeOfDim(const ir::SymExpr& dim, std::span<const ir::SymbolInfo> symbols);

}  // namespace pto::ops

#endif  // PTO_OPS_DERIVED_SYMBOLS_H_
