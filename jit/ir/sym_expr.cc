#include "jit/ir/sym_expr.h"

#include <algorithm>
#include <limits>
#include <map>

namespace pto::ir {
namespace {

int64_t SaturatingMul(int64_t a, int64_t b, bool* overflow) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    if (overflow) *overflow = true;
    return std::numeric_limits<int64_t>::max();
  }
  return r;
}

int64_t SaturatingAdd(int64_t a, int64_t b, bool* overflow) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    if (overflow) *overflow = true;
    return std::numeric_limits<int64_t>::max();
  }
  return r;
}

}  // namespace

SymExpr::SymExpr(int64_t constant) {
  if (constant != 0) terms_.push_back({{}, constant});
}

SymExpr SymExpr::Symbol(int id) {
  SymExpr e;
  e.terms_.push_back({{id}, 1});
  return e;
}

bool SymExpr::IsConstant() const { return terms_.empty() || (terms_.size() == 1 && terms_[0].first.empty()); }

std::optional<int64_t> SymExpr::AsConstant() const {
  if (!IsConstant()) return std::nullopt;
  return constant();
}

std::optional<int> SymExpr::AsSymbol() const {
  if (terms_.size() != 1 || terms_[0].first.size() != 1 || terms_[0].second != 1) {
    return std::nullopt;
  }
  return terms_[0].first[0];
}

int64_t SymExpr::constant() const { return terms_.empty() ? 0 : terms_[0].second; }

std::vector<int> SymExpr::Symbols() const {
  std::vector<int> ids;
  for (const auto& [mono, coeff] : terms_) ids.insert(ids.end(), mono.begin(), mono.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

void SymExpr::Normalize() {
  std::map<Monomial, int64_t> merged;
  for (auto& [mono, coeff] : terms_) {
    std::sort(mono.begin(), mono.end());
    merged[mono] += coeff;
  }
  terms_.clear();
  for (auto& [mono, coeff] : merged) {
    if (coeff != 0) terms_.push_back({mono, coeff});
  }
}

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  SymExpr r = a;
  r.terms_.insert(r.terms_.end(), b.terms_.begin(), b.terms_.end());
  r.Normalize();
  return r;
}

SymExpr operator-(const SymExpr& a, const SymExpr& b) {
  SymExpr r = a;
  for (auto [mono, coeff] : b.terms_) r.terms_.push_back({mono, -coeff});
  r.Normalize();
  return r;
}

SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  SymExpr r;
  for (const auto& [ma, ca] : a.terms_) {
    for (const auto& [mb, cb] : b.terms_) {
      SymExpr::Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      r.terms_.push_back({m, ca * cb});
    }
  }
  r.Normalize();
  return r;
}

std::optional<SymExpr> SymExpr::DivExact(const SymExpr& divisor) const {
  if (divisor.terms_.size() != 1) {
    if (divisor == *this && !terms_.empty()) return SymExpr(1);
    return std::nullopt;
  }
  const auto& [dmono, dcoeff] = divisor.terms_[0];
  SymExpr r;
  for (const auto& [mono, coeff] : terms_) {
    if (coeff % dcoeff != 0) return std::nullopt;
    Monomial rest = mono;
    for (int s : dmono) {
      auto it = std::find(rest.begin(), rest.end(), s);
      if (it == rest.end()) return std::nullopt;
      rest.erase(it);
    }
    r.terms_.push_back({rest, coeff / dcoeff});
  }
  r.Normalize();
  return r;
}

int64_t SymExpr::Evaluate(std::span<const int64_t> values, bool* overflow) const {
  int64_t total = 0;
  for (const auto& [mono, coeff] : terms_) {
    int64_t t = coeff;
    for (int s : mono) t = SaturatingMul(t, values[s], overflow);
    total = SaturatingAdd(total, t, overflow);
  }
  return total;
}

SymExpr SymExpr::Substitute(std::span<const std::optional<SymExpr>> replacement) const {
  SymExpr r;
  for (const auto& [mono, coeff] : terms_) {
    SymExpr t(coeff);
    for (int s : mono) {
      if (s < static_cast<int>(replacement.size()) && replacement[s].has_value()) {
        t = t * *replacement[s];
      } else {
        t = t * Symbol(s);
      }
    }
    r = r + t;
  }
  return r;
}

std::string SymExpr::ToString(std::span<const std::string> names) const {
  if (terms_.empty()) return "0";
  std::string out;
  for (size_t i = 0; i < terms_.size(); ++i) {
    const auto& [mono, coeff] = terms_[i];
    int64_t c = coeff;
    if (i > 0) {
      out += c < 0 ? " - " : " + ";
      if (c < 0) c = -c;
    }
    bool need_star = false;
    if (mono.empty() || c != 1) {
      out += (c == -1 && !mono.empty()) ? "-" : std::to_string(c);
      need_star = !(c == -1 && !mono.empty());
    }
    for (int s : mono) {
      if (need_star) out += "*";
      out += s < static_cast<int>(names.size()) && !names[s].empty() ? names[s]
                                                                      : "s" + std::to_string(s);
      need_star = true;
    }
  }
  return out;
}

SymExpr NumElements(const Shape& shape) {
  SymExpr n(1);
  for (const SymExpr& d : shape) n = n * d;
  return n;
}

std::vector<SymExpr> ContiguousStrides(const Shape& shape) {
  std::vector<SymExpr> strides(shape.size());
  SymExpr s(1);
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s = s * shape[i];
  }
  return strides;
}

std::string ShapeToString(const Shape& shape, std::span<const std::string> names) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += shape[i].ToString(names);
  }
  return out + "]";
}

}  // namespace pto::ir
