#include "jit/shape_class.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/derived_symbols.h"

namespace pto::jit {

SymbolClass ClassifySymbol(int64_t value, const ir::SymbolInfo& info) {
  if (value <= 1) return {value, value};
  int64_t p = int64_t{1} << (63 - __builtin_clzll(static_cast<uint64_t>(value)));
  SymbolClass c;
  c.lo = std::max<int64_t>(std::max<int64_t>(p, 2), info.min);
  c.hi = p > (INT64_MAX >> 1) ? info.max : std::min<int64_t>(2 * p - 1, info.max);
  return c;
}

ShapeClass Classify(std::span<const int64_t> values, std::span<const ir::SymbolInfo> infos) {
  ShapeClass cls;
  for (size_t s = 0; s < infos.size(); ++s) {
    // A derived symbol follows the symbols it is computed from: its class is its whole range.
    cls.symbols.push_back(infos[s].derived.has_value() ? SymbolClass{infos[s].min, infos[s].max}
                                                       : ClassifySymbol(values[s], infos[s]));
  }
  return cls;
}

ShapeClass GenericClass(std::span<const ir::SymbolInfo> infos) {
  ShapeClass cls;
  cls.generic = true;
  for (const ir::SymbolInfo& info : infos) cls.symbols.push_back({info.min, info.max});
  return cls;
}

bool Matches(const ShapeClass& cls, std::span<const int64_t> values,
             std::span<const ir::SymbolInfo> infos) {
  for (size_t s = 0; s < cls.symbols.size(); ++s) {
    if (infos[s].derived.has_value()) continue;
    const SymbolClass& c = cls.symbols[s];
    if (cls.generic ? values[s] < c.lo || values[s] > c.hi
                    : !(ClassifySymbol(values[s], infos[s]) == c)) {
      return false;
    }
  }
  return true;
}

std::string ShapeClass::ToString(std::span<const ir::SymbolInfo> infos) const {
  std::string out;
  for (size_t s = 0; s < symbols.size(); ++s) {
    const SymbolClass& c = symbols[s];
    if (infos[s].derived.has_value()) continue;
    if (!out.empty()) out += ", ";
    out += infos[s].name + "=";
    out += c.lo == c.hi ? std::to_string(c.lo) : absl::StrCat("[", c.lo, "..", c.hi, "]");
  }
  return out;
}

Specialization Specialize(const ShapeClass& cls, std::span<const ir::SymbolInfo> infos) {
  Specialization sp;
  const int n = static_cast<int>(infos.size());
  sp.replacement.resize(n);
  sp.symbols.assign(infos.begin(), infos.end());
  for (int s = 0; s < n; ++s) sp.sources.push_back(SymbolSource{s, 0});
  for (int s = 0; s < n; ++s) {
    const SymbolClass& c = cls.symbols[s];
    if (infos[s].derived.has_value()) {
      // Derived symbols come after the symbols they use, whose replacements are known by now.
      ir::DerivedSymbol& d = *sp.symbols[s].derived;
      d.dim = d.dim.Substitute(sp.replacement);
      if (d.dim.IsConstant()) {
        const int64_t value = ops::EvaluateDerivedSymbol(d, std::span<const int64_t>());
        sp.replacement[s] = ir::SymExpr(value);
        sp.sources[s] = SymbolSource{-1, value};
      }
    } else if (c.lo == c.hi) {
      sp.replacement[s] = ir::SymExpr(c.lo);
      sp.sources[s] = SymbolSource{-1, c.lo};
    }
  }
  return sp;
}

}  // namespace pto::jit
