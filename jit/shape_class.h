// Shape classes: how the symbols of a traced graph are specialized for one compilation.
//   - a value of 0 or 1 is its own class and compiles as a constant (size 1 split out);
//   - other values fall in a power-of-two bucket [2^k, 2^(k+1)) clipped to the symbol's range,
//     compiled with the symbol left symbolic.
// A Function compiles at most max_shape_classes of these; past that, calls run its generic
// class (GenericClass): every symbol over its whole range, symbolic, so one compilation serves
// every call a trace variant accepts.
// A derived symbol (a slice's start or length, ops/derived_symbols.h) is not classified: its
// value follows from the others at each call. It compiles as a constant where the symbols it
// is computed from do, and is read at run time otherwise.
// Dispatch checks the guards of each installed class against the call's symbol values.
#ifndef PTO_JIT_SHAPE_CLASS_H_
#define PTO_JIT_SHAPE_CLASS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "jit/ir/graph.h"
#include "jit/plan.h"

namespace pto::jit {

struct SymbolClass {
  int64_t lo = 0, hi = 0;  // inclusive; lo == hi compiles the symbol as that constant
  friend bool operator==(const SymbolClass&, const SymbolClass&) = default;
};

struct ShapeClass {
  std::vector<SymbolClass> symbols;
  // Every symbol over its whole range (GenericClass): takes every value in the ranges, 0 and 1
  // included, where the classes of Classify split them out.
  bool generic = false;
  friend bool operator==(const ShapeClass&, const ShapeClass&) = default;
  std::string ToString(std::span<const ir::SymbolInfo> infos) const;
};

SymbolClass ClassifySymbol(int64_t value, const ir::SymbolInfo& info);
ShapeClass Classify(std::span<const int64_t> values, std::span<const ir::SymbolInfo> infos);
// The class generic over the symbols' ranges (a range of one value is still that constant).
ShapeClass GenericClass(std::span<const ir::SymbolInfo> infos);
// The guard: would Classify(values) give `cls` (for a generic class: are the values within its
// ranges)? Allocates nothing.
bool Matches(const ShapeClass& cls, std::span<const int64_t> values,
             std::span<const ir::SymbolInfo> infos);

// How to rewrite the traced graph's symbols for `cls`, and where each symbol's runtime value
// comes from (the call's value, or the constant it was specialized to).
struct Specialization {
  std::vector<std::optional<ir::SymExpr>> replacement;
  std::vector<ir::SymbolInfo> symbols;
  std::vector<SymbolSource> sources;
};
Specialization Specialize(const ShapeClass& cls, std::span<const ir::SymbolInfo> infos);

}  // namespace pto::jit

#endif  // PTO_JIT_SHAPE_CLASS_H_
