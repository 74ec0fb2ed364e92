// Symbolic integer expressions: polynomials with int64 coefficients over named symbols.
// They describe tensor dims (`batch`, `batch*seq`, `heads*64`), strides and offsets.
#ifndef PTO_JIT_IR_SYM_EXPR_H_
#define PTO_JIT_IR_SYM_EXPR_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace pto::ir {

class SymExpr {
 public:
  // A monomial is a sorted list of symbol ids (repeats allowed: {0,0} is s0^2).
  using Monomial = std::vector<int>;
  using Term = std::pair<Monomial, int64_t>;

  SymExpr() = default;  // zero
  SymExpr(int64_t constant);  // NOLINT(google-explicit-constructor): dims are ints first.
  static SymExpr Symbol(int id);

  bool IsConstant() const;
  std::optional<int64_t> AsConstant() const;
  // The symbol id when this is exactly one symbol (coefficient 1, degree 1).
  std::optional<int> AsSymbol() const;
  // Constant value; only valid when IsConstant().
  int64_t constant() const;
  const std::vector<Term>& terms() const { return terms_; }
  // Symbol ids used, ascending, unique.
  std::vector<int> Symbols() const;

  friend SymExpr operator+(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator*(const SymExpr& a, const SymExpr& b);
  friend bool operator==(const SymExpr& a, const SymExpr& b) { return a.terms_ == b.terms_; }
  friend bool operator!=(const SymExpr& a, const SymExpr& b) { return !(a == b); }
  // Exact division; nullopt when `divisor` does not divide this polynomial exactly.
  // Supports divisors that are a single term (constant times a monomial).
  std::optional<SymExpr> DivExact(const SymExpr& divisor) const;

  // Value with symbol i bound to values[i]. Saturates to INT64_MAX on overflow (reported by
  // `overflow`) so that callers can refuse absurd sizes instead of wrapping.
  int64_t Evaluate(std::span<const int64_t> values, bool* overflow = nullptr) const;
  // Replaces symbol i by replacement[i] when replacement[i] has a value.
  SymExpr Substitute(std::span<const std::optional<SymExpr>> replacement) const;

  // Human readable: "batch*seq + 3"; symbol names by id (falls back to s<id>).
  std::string ToString(std::span<const std::string> names = {}) const;

 private:
  void Normalize();
  std::vector<Term> terms_;  // sorted by monomial, no zero coefficients
};

using Shape = std::vector<SymExpr>;

// Product of dims (the element count).
SymExpr NumElements(const Shape& shape);
// Row-major contiguous strides (in elements) of `shape`.
std::vector<SymExpr> ContiguousStrides(const Shape& shape);
std::string ShapeToString(const Shape& shape, std::span<const std::string> names = {});

}  // namespace pto::ir

#endif  // PTO_JIT_IR_SYM_EXPR_H_
