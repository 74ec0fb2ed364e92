#include "jit/shape_class.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ops/derived_symbols.h"

namespace pto::jit {

SymbolClass ClassifySymbol(int64_t value, const ir::SymbolInfo& info, int64_t lanes) {
  if (value <= 1) return {value, value, 1};
  int64_t p = int64_t{1} << (63 - __builtin_clzll(static_cast<uint64_t>(value)));
  SymbolClass c;
  c.lo = std::max<int64_t>(std::max<int64_t>(p, 2), info.min);
  c.hi = p > (INT64_MAX >> 1) ? info.max : std::min<int64_t>(2 * p - 1, info.max);
  c.divisor = lanes > 1 && value % lanes == 0 ? lanes : 1;
  if (c.lo == c.hi) c.divisor = 1;
  return c;
}

ShapeClass Classify(std::span<const int64_t> values, std::span<const ir::SymbolInfo> infos,
                    int64_t lanes) {
  ShapeClass cls;
  for (size_t s = 0; s < infos.size(); ++s) {
    // A derived symbol follows the symbols it is computed from: its class is its whole range.
    cls.symbols.push_back(infos[s].derived.has_value()
                              ? SymbolClass{infos[s].min, infos[s].max, 1}
                              : ClassifySymbol(values[s], infos[s], lanes));
  }
  return cls;
}

bool Matches(const ShapeClass& cls, std::span<const int64_t> values,
             std::span<const ir::SymbolInfo> infos, int64_t lanes) {
  for (size_t s = 0; s < cls.symbols.size(); ++s) {
    if (infos[s].derived.has_value()) continue;
    if (!(ClassifySymbol(values[s], infos[s], lanes) == cls.symbols[s])) return false;
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
    if (c.lo == c.hi) {
      out += std::to_string(c.lo);
    } else {
      out += absl::StrCat("[", c.lo, "..", c.hi, "]");
      if (c.divisor > 1) out += absl::StrCat(" %", c.divisor);
    }
  }
  return out;
}

Specialization Specialize(const ShapeClass& cls, std::span<const ir::SymbolInfo> infos) {
  Specialization sp;
  const int n = static_cast<int>(infos.size());
  sp.replacement.resize(n);
  sp.symbols.assign(infos.begin(), infos.end());
  for (int s = 0; s < n; ++s) sp.sources.push_back(SymbolSource{s, 1, 0});
  for (int s = 0; s < n; ++s) {
    const SymbolClass& c = cls.symbols[s];
    if (infos[s].derived.has_value()) {
      // Derived symbols come after the symbols they use, whose replacements are known by now.
      ir::DerivedSymbol& d = *sp.symbols[s].derived;
      d.dim = d.dim.Substitute(sp.replacement);
      if (d.dim.IsConstant()) {
        const int64_t value = ops::EvaluateDerivedSymbol(d, std::span<const int64_t>());
        sp.replacement[s] = ir::SymExpr(value);
        sp.sources[s] = SymbolSource{-1, 1, value};
      }
    } else if (c.lo == c.hi) {
      sp.replacement[s] = ir::SymExpr(c.lo);
      sp.sources[s] = SymbolSource{-1, 1, c.lo};
    } else if (c.divisor > 1) {
      const int t = static_cast<int>(sp.symbols.size());
      sp.symbols.push_back(ir::SymbolInfo{absl::StrCat(infos[s].name, "/", c.divisor),
                                          c.lo / c.divisor, c.hi / c.divisor});
      sp.sources.push_back(SymbolSource{s, c.divisor, 0});
      sp.replacement[s] = ir::SymExpr(c.divisor) * ir::SymExpr::Symbol(t);
    }
  }
  return sp;
}

}  // namespace pto::jit
