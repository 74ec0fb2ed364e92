// Shape classes: how the symbols of a traced graph are specialized for one compilation.
//   - a value of 0 or 1 is its own class and compiles as a constant (size 1 split out);
//   - other values fall in a power-of-two bucket [2^k, 2^(k+1)) clipped to the symbol's range;
//   - within a bucket, multiples of the vector width are their own class, compiled with the
//     symbol rewritten as width * s' so that codegen sees the divisibility.
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
  int64_t divisor = 1;     // every value in the class is a multiple of it
  friend bool operator==(const SymbolClass&, const SymbolClass&) = default;
};

struct ShapeClass {
  std::vector<SymbolClass> symbols;
  friend bool operator==(const ShapeClass&, const ShapeClass&) = default;
  std::string ToString(std::span<const ir::SymbolInfo> infos) const;
};

SymbolClass ClassifySymbol(int64_t value, const ir::SymbolInfo& info, int64_t lanes);
ShapeClass Classify(std::span<const int64_t> values, std::span<const ir::SymbolInfo> infos,
                    int64_t lanes);
// The guard: would Classify(values) give `cls`? Allocates nothing.
bool Matches(const ShapeClass& cls, std::span<const int64_t> values,
             std::span<const ir::SymbolInfo> infos, int64_t lanes);

// How to rewrite the traced graph's symbols for `cls`, the symbols of the specialized graph
// (the traced ones plus one per divisible symbol) and where each one's runtime value comes from.
struct Specialization {
  std::vector<std::optional<ir::SymExpr>> replacement;
  std::vector<ir::SymbolInfo> symbols;
  std::vector<SymbolSource> sources;
};
Specialization Specialize(const ShapeClass& cls, std::span<const ir::SymbolInfo> infos);

}  // namespace pto::jit

#endif  // PTO_JIT_SHAPE_CLASS_H_
