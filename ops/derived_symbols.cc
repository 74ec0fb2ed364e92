#include "ops/derived_symbols.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/shape_rules.h"

namespace pto::ops {
namespace {

using Kind = ir::DerivedSymbol::Kind;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

int64_t Clamp128(__int128 v) { return static_cast<int64_t>(std::clamp<__int128>(v, kMin, kMax)); }

// Bounds of `e` over its symbols' ranges, not clamped to 0 (a difference of dims may be
// negative). Symbols are never negative, so a monomial ranges over [prod of mins, prod of maxes].
DimRange Bounds(const ir::SymExpr& e, std::span<const ir::SymbolInfo> symbols) {
  __int128 lo = 0, hi = 0;
  for (const auto& [mono, coeff] : e.terms()) {
    __int128 mlo = 1, mhi = 1;
    for (int s : mono) {
      mlo = std::min<__int128>(mlo * std::max<int64_t>(symbols[s].min, 0), kMax);
      mhi = std::min<__int128>(mhi * std::max<int64_t>(symbols[s].max, 0), kMax);
    }
    lo += Clamp128(coeff >= 0 ? coeff * mlo : coeff * mhi);
    hi += Clamp128(coeff >= 0 ? coeff * mhi : coeff * mlo);
  }
  return {Clamp128(lo), Clamp128(hi)};
}

// Elements of a slice of `length` positions with `step`: ceil(length / step), 0 if none.
int64_t CeilCount(int64_t length, int64_t step) {
  return length <= 0 ? 0 : 1 + (length - 1) / step;
}

std::string Spec(int64_t start, int64_t end, int64_t step) {
  std::string out = start == 0 ? ":" : absl::StrCat(start, ":");
  if (end != kMax) absl::StrAppend(&out, end);
  if (step != 1) absl::StrAppend(&out, ":", step);
  return out;
}

// The derived symbol `d` as an expression: an existing equal one, or a new one when `add` is
// not null; nullopt if it is missing and cannot be added.
std::optional<ir::SymExpr> DerivedSymbolOf(const ir::DerivedSymbol& d,
                                           std::span<const ir::SymbolInfo> symbols,
                                           std::vector<ir::SymbolInfo>* add) {
  for (size_t s = 0; s < symbols.size(); ++s) {
    if (symbols[s].derived == d) return ir::SymExpr::Symbol(static_cast<int>(s));
  }
  if (add == nullptr) return std::nullopt;
  std::vector<std::string> names;
  for (const ir::SymbolInfo& info : *add) names.push_back(info.name);
  std::string dim = d.dim.ToString(names);
  if (d.dim.terms().size() != 1 || d.dim.terms()[0].second != 1) dim = absl::StrCat("(", dim, ")");
  const int64_t hi = RangeOfDim(d.dim, symbols).hi;
  ir::SymbolInfo info;
  info.name = absl::StrCat(dim, "[", Spec(d.start, d.end, d.step), "]",
                           d.kind == Kind::kSliceStart ? ".start" : "");
  info.min = 0;
  info.max = d.kind == Kind::kSliceStart ? hi : CeilCount(hi, d.step);
  info.derived = d;
  add->push_back(std::move(info));
  return ir::SymExpr::Symbol(static_cast<int>(add->size()) - 1);
}

// How a slice's bounds resolve over the range of its dim.
struct Resolution {
  std::optional<ir::SymExpr> start, length;  // nullopt: needs a derived symbol
};

Resolution Resolve(const ir::SymExpr& dim, int64_t start, int64_t end, int64_t step,
                   std::span<const ir::SymbolInfo> symbols) {
  if (std::optional<int64_t> c = dim.AsConstant()) {
    const SliceBounds b = ResolveSlice(*c, start, end, step);
    return {ir::SymExpr(b.start), ir::SymExpr(b.length)};
  }
  const DimRange r = RangeOfDim(dim, symbols);
  // start' and end' as polynomials where no size in the range clamps them.
  std::optional<ir::SymExpr> s, e;
  if (start >= 0) {
    if (start <= r.lo) s = ir::SymExpr(start);
  } else if (start != kMin && -start <= r.lo) {
    s = dim + ir::SymExpr(start);
  }
  if (end >= r.hi) {
    e = dim;
  } else if (end >= 0) {
    if (end <= r.lo) e = ir::SymExpr(end);
  } else if (end != kMin && -end <= r.lo) {
    e = dim + ir::SymExpr(end);
  }
  Resolution out;
  out.start = start >= 0 ? std::optional<ir::SymExpr>(ir::SymExpr(start)) : s;
  if ((start >= 0) == (end >= 0) && end <= start) {
    out.length = ir::SymExpr(0);  // both resolve alike (clamping is monotonic): end' <= start'
  } else if (s.has_value() && e.has_value()) {
    const ir::SymExpr diff = *e - *s;
    if (std::optional<int64_t> c = diff.AsConstant()) {
      out.length = ir::SymExpr(CeilCount(*c, step));
    } else if (step == 1 && Bounds(diff, symbols).lo >= 0) {
      out.length = diff;
    }
  }
  return out;
}

}  // namespace

DimRange RangeOfDim(const ir::SymExpr& dim, std::span<const ir::SymbolInfo> symbols) {
  DimRange r = Bounds(dim, symbols);
  r.lo = std::max<int64_t>(r.lo, 0);
  r.hi = std::max<int64_t>(r.hi, 0);
  return r;
}

SymbolicSlice ResolveSymbolicSlice(const ir::SymExpr& dim, int64_t start, int64_t end, int64_t step,
                                   std::vector<ir::SymbolInfo>& symbols) {
  Resolution r = Resolve(dim, start, end, step, symbols);
  SymbolicSlice out;
  out.start = r.start.has_value()
                  ? *r.start
                  : *DerivedSymbolOf({Kind::kSliceStart, dim, start, end, step}, symbols, &symbols);
  out.length = r.length.has_value() ? *r.length
                                    : *DerivedSymbolOf({Kind::kSliceLength, dim, start, end, step},
                                                       symbols, &symbols);
  return out;
}

std::optional<ir::SymExpr> SymbolicSliceStart(const ir::SymExpr& dim, int64_t start, int64_t end,
                                              int64_t step,
                                              std::span<const ir::SymbolInfo> symbols) {
  Resolution r = Resolve(dim, start, end, step, symbols);
  if (r.start.has_value()) return r.start;
  return DerivedSymbolOf({Kind::kSliceStart, dim, start, end, step}, symbols, nullptr);
}

int64_t EvaluateDerivedSymbol(const ir::DerivedSymbol& derived, std::span<const int64_t> values) {
  const SliceBounds b =
      ResolveSlice(derived.dim.Evaluate(values), derived.start, derived.end, derived.step);
  return derived.kind == Kind::kSliceStart ? b.start : b.length;
}

void BindDerivedSymbols(std::span<const ir::SymbolInfo> symbols, std::span<int64_t> values) {
  for (size_t s = 0; s < symbols.size(); ++s) {
    if (symbols[s].derived.has_value()) {
      values[s] = EvaluateDerivedSymbol(*symbols[s].derived, values);
    }
  }
}

}  // namespace pto::ops
