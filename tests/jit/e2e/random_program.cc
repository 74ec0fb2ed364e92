#include "tests/jit/e2e/random_program.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "jit/shape_class.h"
#include "jit/trace.h"
#include "ops/derived_symbols.h"
#include "ops/shape_rules.h"

namespace pto::testing {
namespace {

using ir::OpKind;
using ir::SymExpr;

constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();
// Values beyond these bounds are not made: a program stays where f32 results are meaningful.
constexpr double kMaxMagnitude = 1e4;
constexpr double kMaxError = 1e-2;
// 1 / sqrt(eps) of the norms (layer_norm's default eps 1e-5, rms_norm's 1e-6): how much a
// norm may amplify its input's error on a row of nearly equal values.
constexpr double kLayerNormGain = 316.3;
constexpr double kRmsNormGain = 1000.0;

std::optional<int> SingleSymbol(const SymExpr& d) {
  if (d.terms().size() != 1) return std::nullopt;
  const auto& [mono, coeff] = d.terms()[0];
  if (mono.size() != 1 || coeff != 1) return std::nullopt;
  return mono[0];
}

}  // namespace

// Builds a RandomProgram: draws steps, keeps those the shape rules accept and whose values stay
// within the size, magnitude and error limits.
class ProgramBuilder {
 public:
  ProgramBuilder(uint64_t seed, const RandomProgramOptions& options) : rng_(seed), o_(options) {
    p_.seed_ = seed;
  }

  RandomProgram Build() {
    DrawSymbols();
    const int first_inputs = static_cast<int>(Uniform(1, 2));
    for (int i = 0; i < first_inputs; ++i) {
      for (int attempt = 0; attempt < 20; ++attempt) {
        if (AddInput(RandomShape(static_cast<int>(Uniform(0, 9) == 0 ? 0 : Uniform(1, 3)))) >= 0) {
          break;
        }
      }
    }
    if (p_.values_.empty()) AddInput({SymExpr(3)});
    const int ops = static_cast<int>(Uniform(1, o_.max_ops));
    for (int op = 0; op < ops; ++op) {
      for (int attempt = 0; attempt < 30; ++attempt) {
        if (Step()) break;
      }
    }
    ChooseOutputs();
    return std::move(p_);
  }

 private:
  // --- random draws (rng_() only: the same program on every platform) ---
  int64_t Uniform(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(int percent) { return Uniform(0, 99) < percent; }
  template <typename T>
  T Pick(std::initializer_list<T> items) {
    return *(items.begin() + Uniform(0, static_cast<int64_t>(items.size()) - 1));
  }

  // --- symbols ---
  void DrawSymbols() {
    const int n = static_cast<int>(std::min<int64_t>(Pick({0, 1, 1, 2, 2}), o_.max_symbols));
    p_.call_values_.assign(2, {});
    for (int s = 0; s < n; ++s) {
      ir::SymbolInfo info;
      info.name = absl::StrCat("n", s);
      info.min = Pick<int64_t>({0, 0, 1, 1, 2, 3});
      info.max =
          Chance(25) ? 4096 : Uniform(std::min<int64_t>(info.min + 4, o_.max_size), o_.max_size);
      const int64_t top = std::min(info.max, o_.max_size);
      // Mostly sizes whose class is a range (read at run time), also the range's bounds, 0 and 1.
      std::vector<int64_t> choices = {info.min, top};
      for (int i = 0; i < 4; ++i)
        choices.push_back(Uniform(std::min<int64_t>(info.min + 2, top), top));
      if (info.min <= 1 && top >= 1) choices.push_back(1);
      if (info.min == 0) choices.push_back(0);
      const int64_t first = choices[Uniform(0, static_cast<int64_t>(choices.size()) - 1)];
      // The second call: another size of the first's shape class if one is near, else the same.
      int64_t second = first;
      const jit::SymbolClass cls = jit::ClassifySymbol(first, info);
      for (int attempt = 0; attempt < 20; ++attempt) {
        const int64_t v = Uniform(std::max(info.min, first - 8), std::min(top, first + 8));
        if (jit::ClassifySymbol(v, info) == cls) {
          second = v;
          break;
        }
      }
      p_.symbols_.push_back(info);
      p_.call_values_[0].push_back(first);
      p_.call_values_[1].push_back(second);
    }
    free_symbols_ = n;
  }

  // Values of the symbols `symbols` derived beyond the ones known.
  void BindNewSymbols(const std::vector<ir::SymbolInfo>& symbols) {
    for (std::vector<int64_t>& values : p_.call_values_) {
      for (size_t s = values.size(); s < symbols.size(); ++s) {
        values.push_back(ops::EvaluateDerivedSymbol(*symbols[s].derived, values));
      }
    }
  }

  // --- shapes ---
  std::vector<int64_t> Eval(const ir::Shape& shape, int call) const {
    std::vector<int64_t> dims;
    for (const SymExpr& d : shape) dims.push_back(d.Evaluate(p_.call_values_[call]));
    return dims;
  }
  int64_t MaxOf(const SymExpr& d) const {
    int64_t m = 0;
    for (const std::vector<int64_t>& values : p_.call_values_) m = std::max(m, d.Evaluate(values));
    return m;
  }
  int64_t MinOf(const SymExpr& d) const {
    int64_t m = std::numeric_limits<int64_t>::max();
    for (const std::vector<int64_t>& values : p_.call_values_) m = std::min(m, d.Evaluate(values));
    return m;
  }
  bool Fits(const ir::Shape& shape) const {
    for (int call = 0; call < 2; ++call) {
      int64_t n = 1;
      for (int64_t d : Eval(shape, call)) {
        if (d < 0 || d > o_.max_size * 64) return false;
        n *= d;
        if (n > o_.max_elements) return false;
      }
    }
    return true;
  }
  // A dim an input can have: a constant or one free symbol.
  bool InputDim(const SymExpr& d) const {
    if (d.IsConstant()) return true;
    std::optional<int> s = SingleSymbol(d);
    return s.has_value() && *s < free_symbols_;
  }
  SymExpr RandomDim() {
    if (free_symbols_ > 0 && Chance(40))
      return SymExpr::Symbol(static_cast<int>(Uniform(0, free_symbols_ - 1)));
    if (Chance(4)) return SymExpr(0);
    return SymExpr(Pick<int64_t>({1, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33}));
  }
  ir::Shape RandomShape(int rank) {
    ir::Shape s;
    for (int i = 0; i < rank; ++i) s.push_back(RandomDim());
    return s;
  }

  // --- values ---
  int AddInput(ir::Shape shape) {
    for (const SymExpr& d : shape) {
      if (!InputDim(d)) return -1;
    }
    if (!Fits(shape)) return -1;
    ProgramValue v;
    v.kind = ProgramValue::Kind::kInput;
    v.input = static_cast<int>(p_.inputs_.size());
    v.shape = std::move(shape);
    p_.inputs_.push_back(static_cast<int>(p_.values_.size()));
    p_.values_.push_back(std::move(v));
    return static_cast<int>(p_.values_.size()) - 1;
  }
  int AddConstant(double c) {
    ProgramValue v;
    v.kind = ProgramValue::Kind::kConstant;
    v.attrs.scalar = c;
    v.magnitude = std::fabs(c);
    v.floor = std::fabs(c);
    p_.values_.push_back(std::move(v));
    return static_cast<int>(p_.values_.size()) - 1;
  }
  const ProgramValue& V(int id) const { return p_.values_[id]; }

  // A recent value usable as an operand (not a constant, not terminal); -1 if none.
  int Operand() {
    std::vector<int> ids;
    for (size_t i = 0; i < p_.values_.size(); ++i) {
      const ProgramValue& v = p_.values_[i];
      if (v.kind != ProgramValue::Kind::kConstant && !v.terminal)
        ids.push_back(static_cast<int>(i));
    }
    if (ids.empty()) return -1;
    int64_t back = 0;
    while (back + 1 < static_cast<int64_t>(ids.size()) && Chance(45)) ++back;
    return ids[ids.size() - 1 - back];
  }

  // Appends op(args) if the shape rules accept it and its value stays within the limits.
  int Append(OpKind op, ir::Attrs attrs, std::vector<int> args) {
    std::vector<ir::Shape> shapes;
    for (int a : args) shapes.push_back(V(a).shape);
    std::vector<ir::SymbolInfo> symbols = p_.symbols_;
    absl::StatusOr<ir::Shape> shape = ops::InferShape(op, attrs, shapes, &symbols);
    if (!shape.ok()) return -1;
    const size_t known = p_.symbols_.size();
    p_.symbols_ = symbols;
    BindNewSymbols(symbols);
    ProgramValue v;
    v.op = op;
    v.attrs = std::move(attrs);
    v.args = std::move(args);
    v.shape = *std::move(shape);
    if (!Fits(v.shape) || !ValidAtEveryCall(v) || !Bound(v) || v.magnitude > kMaxMagnitude ||
        v.error > kMaxError) {
      p_.symbols_.resize(known);  // drop what this op derived
      for (std::vector<int64_t>& values : p_.call_values_) values.resize(known);
      return -1;
    }
    p_.values_.push_back(std::move(v));
    return static_cast<int>(p_.values_.size()) - 1;
  }

  // Whether the rules accept `v`'s op at each call's static shapes (a symbolic rule may hold
  // under a guard only); a static result that differs from the symbolic one is a bug of the
  // rules, recorded in the program's problems.
  bool ValidAtEveryCall(const ProgramValue& v) {
    for (int call = 0; call < static_cast<int>(p_.call_values_.size()); ++call) {
      std::vector<ir::Shape> shapes;
      for (int a : v.args) {
        ir::Shape s;
        for (int64_t d : Eval(V(a).shape, call)) s.push_back(SymExpr(d));
        shapes.push_back(std::move(s));
      }
      absl::StatusOr<ir::Shape> shape = ops::InferShape(v.op, v.attrs, shapes);
      if (!shape.ok()) return false;
      std::vector<int64_t> dims;
      for (const SymExpr& d : *shape) dims.push_back(d.constant());
      if (dims != Eval(v.shape, call)) {
        p_.problems_.push_back(absl::StrCat(
            ir::OpName(v.op), " gives ", ir::ShapeToString(*shape), " on static shapes at call ",
            call + 1, " but its symbolic shape ", ir::ShapeToString(v.shape), " evaluates to [",
            absl::StrJoin(Eval(v.shape, call), ", "), "]"));
      }
    }
    return true;
  }

  // The reduced length of `v` (its op's reduction): the largest over the calls.
  int64_t ReductionLength(const ProgramValue& v) const {
    const ir::Shape& in = V(v.args[0]).shape;
    switch (v.op) {
      case OpKind::kReduceSum:
      case OpKind::kReduceMax:
      case OpKind::kReduceMean:
        return MaxOf(
            in[v.attrs.axis < 0 ? v.attrs.axis + static_cast<int64_t>(in.size()) : v.attrs.axis]);
      case OpKind::kMatMul:
        return MaxOf(v.attrs.transpose_a ? in[in.size() - 2] : in.back());
      default:
        return in.empty() ? 1 : MaxOf(in.back());
    }
  }

  // Sets v's magnitude, floor and error bounds; false if they cannot be bounded.
  bool Bound(ProgramValue& v) const {
    const ProgramValue& a = V(v.args[0]);
    const ProgramValue* b = v.args.size() > 1 ? &V(v.args[1]) : nullptr;
    const int64_t n = ReductionLength(v);
    double gain = 1;  // d out / d a
    v.magnitude = a.magnitude;
    switch (v.op) {
      case OpKind::kNeg:
      case OpKind::kAbs:
      case OpKind::kRelu:
      case OpKind::kCast:
      case OpKind::kTranspose:
      case OpKind::kReshape:
      case OpKind::kSlice:
      case OpKind::kReduceMax:
        break;
      case OpKind::kTanh:
        v.magnitude = std::min(1.0, a.magnitude);
        break;
      case OpKind::kSigmoid:
        v.magnitude = 1;
        gain = 0.25;
        break;
      case OpKind::kGeluErf:
      case OpKind::kGeluTanh:
      case OpKind::kSilu:
        gain = 1.13;
        break;
      case OpKind::kExp:
        v.magnitude = std::exp(a.magnitude);
        gain = v.magnitude;
        break;
      case OpKind::kLog:  // of abs(x) + 1
        if (a.floor < 1) return false;
        v.magnitude = std::log(a.magnitude);
        break;
      case OpKind::kSqrt:
        if (a.floor < 1) return false;
        v.magnitude = std::sqrt(a.magnitude);
        v.floor = std::sqrt(a.floor);
        gain = 0.5;
        break;
      case OpKind::kRsqrt:
        if (a.floor < 1) return false;
        v.magnitude = 1;
        gain = 0.5;
        break;
      case OpKind::kAdd:
      case OpKind::kSub:
        v.magnitude = a.magnitude + b->magnitude;
        if (v.op == OpKind::kAdd && a.kind == ProgramValue::Kind::kOp && a.op == OpKind::kAbs &&
            b->kind == ProgramValue::Kind::kConstant && b->attrs.scalar > 0) {
          v.floor = b->attrs.scalar;  // abs(x) + c >= c
        }
        v.error = b->error;
        break;
      case OpKind::kMul:
        v.magnitude = a.magnitude * b->magnitude;
        gain = b->magnitude;
        v.error = b->error * a.magnitude + a.error * b->error;
        break;
      case OpKind::kDiv:
        if (b->floor < 0.5) return false;
        v.magnitude = a.magnitude / b->floor;
        gain = 1 / b->floor;
        v.error = b->error * a.magnitude / (b->floor * b->floor);
        break;
      case OpKind::kMax:
      case OpKind::kMin:
        v.magnitude = std::max(a.magnitude, b->magnitude);
        v.error = b->error;
        break;
      case OpKind::kReduceSum:
        v.magnitude = static_cast<double>(n) * a.magnitude;
        gain = static_cast<double>(n);
        break;
      case OpKind::kReduceMean:
        break;
      case OpKind::kSoftmax:
        v.magnitude = 1;
        break;
      case OpKind::kLogSoftmax:
        v.magnitude = 2 * a.magnitude + std::log(std::max<double>(n, 1));
        gain = 2;
        break;
      case OpKind::kLayerNorm:
      case OpKind::kRmsNorm: {
        const double g = v.op == OpKind::kLayerNorm ? kLayerNormGain : kRmsNormGain;
        const double rows = std::sqrt(std::max<double>(n, 1));
        v.magnitude = rows * b->magnitude + (v.args.size() > 2 ? V(v.args[2]).magnitude : 0);
        // An input error and the row statistics' own rounding (n ulps of the inputs), both
        // amplified by the normalization, then scaled by the weight.
        gain = 3 * g * b->magnitude;
        v.error = gain * static_cast<double>(n) * FLT_EPSILON * a.magnitude + rows * b->error +
                  (v.args.size() > 2 ? V(v.args[2]).error : 0);
        break;
      }
      case OpKind::kMatMul:
        v.magnitude = static_cast<double>(n) * a.magnitude * b->magnitude;
        gain = static_cast<double>(n) * b->magnitude;
        v.error = static_cast<double>(n) * b->error * a.magnitude;
        break;
      case OpKind::kConcat:
        for (int arg : v.args) {
          v.magnitude = std::max(v.magnitude, V(arg).magnitude);
          v.error = std::max(v.error, V(arg).error);
        }
        return true;
      default:
        return false;
    }
    // The op's own rounding: ops/tolerance.h's bound, for inputs of magnitude up to 1 scaled
    // to this value's magnitude.
    const ops::Tolerance own = ops::OpTolerance(v.op, n);
    v.error += gain * a.error + (own.abs + own.rel) * std::max(1.0, v.magnitude);
    return std::isfinite(v.magnitude) && std::isfinite(v.error);
  }

  // abs(x) + 1: an operand >= 1 for log, sqrt, rsqrt and division.
  int AtLeastOne(int x) {
    const int a = Append(OpKind::kAbs, {}, {x});
    if (a < 0) return -1;
    return Append(OpKind::kAdd, {}, {a, AddConstant(1.0)});
  }

  // --- steps ---
  bool Step() {
    const int a = Operand();
    if (a < 0) return false;
    switch (Uniform(0, 9)) {
      case 0:
        return Unary(a);
      case 1:
        return Scalar(a);
      case 2:
        return Binary(a);
      case 3:
        return Reduce(a);
      case 4:
        return RowOp(a);
      case 5:
        return MatMul(a);
      case 6:
        return Chance(50) ? Transpose(a) : Reshape(a);
      case 7:
        return Concat(a);
      default:
        return Slice(a);
    }
  }

  bool Unary(int a) {
    const OpKind op = Pick({OpKind::kNeg, OpKind::kAbs, OpKind::kExp, OpKind::kLog, OpKind::kSqrt,
                            OpKind::kRsqrt, OpKind::kTanh, OpKind::kSigmoid, OpKind::kRelu,
                            OpKind::kGeluTanh, OpKind::kGeluErf, OpKind::kSilu, OpKind::kCast});
    if (op == OpKind::kExp && V(a).magnitude > 8) return false;
    if (op == OpKind::kLog || op == OpKind::kSqrt || op == OpKind::kRsqrt) {
      a = AtLeastOne(a);
      if (a < 0) return false;
    }
    return Append(op, {}, {a}) >= 0;
  }

  bool Scalar(int a) {
    const double c = Pick({-2.0, -0.5, 0.5, 1.5, 2.0, 3.0});
    const OpKind op =
        Pick({OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kMax, OpKind::kMin});
    const int k = AddConstant(c);
    if (op == OpKind::kDiv && Chance(50)) {  // c / (abs(x) + 1)
      const int d = AtLeastOne(a);
      return d >= 0 && Append(op, {}, {k, d}) >= 0;
    }
    return Append(op, {},
                  Chance(50) || op == OpKind::kDiv ? std::vector<int>{a, k}
                                                   : std::vector<int>{k, a}) >= 0;
  }

  // An operand that broadcasts with `a`: a new input (a's shape, some dims 1 or dropped), an
  // earlier value of a broadcast-compatible shape, or `a` itself.
  int BroadcastPartner(int a) {
    const ir::Shape s = V(a).shape;  // a copy: appending values moves them
    if (Chance(45)) {
      ir::Shape shape;
      const size_t drop = s.empty() || Chance(70) ? 0 : Uniform(0, s.size());
      for (size_t i = drop; i < s.size(); ++i) {
        shape.push_back(!InputDim(s[i]) || Chance(30) ? SymExpr(1) : s[i]);
      }
      return AddInput(std::move(shape));
    }
    std::vector<int> partners;
    for (size_t i = 0; i < p_.values_.size(); ++i) {
      const ProgramValue& v = p_.values_[i];
      if (v.kind == ProgramValue::Kind::kConstant || v.terminal) continue;
      std::vector<ir::SymbolInfo> symbols = p_.symbols_;
      const std::vector<ir::Shape> both = {s, v.shape};
      if (ops::InferShape(OpKind::kAdd, {}, both, &symbols).ok())
        partners.push_back(static_cast<int>(i));
    }
    return partners[Uniform(0, static_cast<int64_t>(partners.size()) - 1)];  // a is one
  }

  bool Binary(int a) {
    int b = BroadcastPartner(a);
    if (b < 0) return false;
    const OpKind op =
        Pick({OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kMax, OpKind::kMin});
    if (op == OpKind::kDiv) {
      b = AtLeastOne(b);
      if (b < 0) return false;
    }
    return Append(op, {}, Chance(50) ? std::vector<int>{a, b} : std::vector<int>{b, a}) >= 0;
  }

  bool Reduce(int a) {
    const ir::Shape s = V(a).shape;  // a copy: appending values moves them
    if (s.empty()) return false;
    ir::Attrs attrs;
    attrs.axis = Uniform(-static_cast<int64_t>(s.size()), static_cast<int64_t>(s.size()) - 1);
    attrs.keepdims = Chance(40);
    const OpKind op = Pick({OpKind::kReduceSum, OpKind::kReduceMax, OpKind::kReduceMean});
    const SymExpr axis_dim =
        s[attrs.axis < 0 ? attrs.axis + static_cast<int64_t>(s.size()) : attrs.axis];
    const int r = Append(op, attrs, {a});
    // The max or mean of an empty axis is -inf or NaN: kept only as an output.
    if (r >= 0 && op != OpKind::kReduceSum && MinOf(axis_dim) == 0) p_.values_[r].terminal = true;
    return r >= 0;
  }

  bool RowOp(int a) {
    const ir::Shape s = V(a).shape;  // a copy: appending values moves them
    if (s.empty()) return false;
    const OpKind op =
        Pick({OpKind::kSoftmax, OpKind::kLogSoftmax, OpKind::kLayerNorm, OpKind::kRmsNorm});
    if (op == OpKind::kSoftmax || op == OpKind::kLogSoftmax) return Append(op, {}, {a}) >= 0;
    if (!InputDim(s.back())) return false;
    std::vector<int> args = {a, AddInput({s.back()})};
    if (op == OpKind::kLayerNorm) args.push_back(AddInput({s.back()}));
    if (*std::min_element(args.begin(), args.end()) < 0) return false;
    ir::Attrs attrs;
    attrs.eps = op == OpKind::kLayerNorm ? 1e-5f : 1e-6f;
    return Append(op, attrs, args) >= 0;
  }

  bool MatMul(int a) {
    const ir::Shape s = V(a).shape;  // a copy: appending values moves them
    if (s.size() < 2) return false;
    ir::Attrs attrs;
    attrs.transpose_a = Chance(25);
    attrs.transpose_b = Chance(30);
    const SymExpr k = attrs.transpose_a ? s[s.size() - 2] : s.back();
    int b = -1;
    if (Chance(60) && InputDim(k)) {
      const SymExpr n = RandomDim();
      ir::Shape shape = attrs.transpose_b ? ir::Shape{n, k} : ir::Shape{k, n};
      if (s.size() >= 3 && Chance(40))
        shape.insert(shape.begin(),
                     InputDim(s[s.size() - 3]) && Chance(60) ? s[s.size() - 3] : SymExpr(1));
      b = AddInput(std::move(shape));
    } else {
      std::vector<int> partners;
      for (size_t i = 0; i < p_.values_.size(); ++i) {
        const ProgramValue& v = p_.values_[i];
        if (v.kind == ProgramValue::Kind::kConstant || v.terminal || v.shape.size() < 2) continue;
        std::vector<ir::SymbolInfo> symbols = p_.symbols_;
        const std::vector<ir::Shape> both = {s, v.shape};
        if (ops::InferShape(OpKind::kMatMul, attrs, both, &symbols).ok())
          partners.push_back(static_cast<int>(i));
      }
      if (partners.empty()) return false;
      b = partners[Uniform(0, static_cast<int64_t>(partners.size()) - 1)];
    }
    return b >= 0 && Append(OpKind::kMatMul, attrs, {a, b}) >= 0;
  }

  bool Transpose(int a) {
    const size_t rank = V(a).shape.size();
    if (rank < 2) return false;
    ir::Attrs attrs;
    for (size_t i = 0; i < rank; ++i) attrs.ints.push_back(static_cast<int64_t>(i));
    for (size_t i = rank - 1; i > 0; --i) std::swap(attrs.ints[i], attrs.ints[Uniform(0, i)]);
    return Append(OpKind::kTranspose, attrs, {a}) >= 0;
  }

  bool Reshape(int a) {
    const ir::Shape s = V(a).shape;  // a copy: appending values moves them
    ir::Attrs attrs;
    const int64_t rank = static_cast<int64_t>(s.size());
    switch (Uniform(0, 3)) {
      case 0:  // flatten
        attrs.ints = {-1};
        break;
      case 1:  // merge the last two dims
        if (rank < 2) return false;
        attrs.ints.assign(rank - 2, 0);
        attrs.ints.push_back(-1);
        break;
      case 2: {  // split a constant last dim p * q
        if (rank < 1 || !s.back().IsConstant()) return false;
        const int64_t d = s.back().constant();
        int64_t p = 0;
        for (int64_t f : {2, 3, 4, 8}) {
          if (d % f == 0 && d > f) p = f;
        }
        if (p == 0) return false;
        attrs.ints.assign(rank - 1, 0);
        attrs.ints.push_back(p);
        attrs.ints.push_back(-1);
        break;
      }
      default:  // a trailing unit dim
        attrs.ints.assign(rank, 0);
        attrs.ints.push_back(1);
        break;
    }
    return Append(OpKind::kReshape, attrs, {a}) >= 0;
  }

  bool Concat(int a) {
    const ir::Shape s = V(a).shape;  // a copy: appending values moves them
    if (s.empty()) return false;
    ir::Attrs attrs;
    attrs.axis = Uniform(-static_cast<int64_t>(s.size()), static_cast<int64_t>(s.size()) - 1);
    const int64_t axis = attrs.axis < 0 ? attrs.axis + static_cast<int64_t>(s.size()) : attrs.axis;
    std::vector<int> args = {a};
    const int more = static_cast<int>(Uniform(1, 2));
    for (int i = 0; i < more; ++i) {
      if (Chance(50)) {
        ir::Shape shape = s;
        shape[axis] = RandomDim();
        const int in = AddInput(std::move(shape));
        args.push_back(in >= 0 ? in : a);
      } else {
        args.push_back(a);
      }
    }
    return Append(OpKind::kConcat, attrs, args) >= 0;
  }

  bool Slice(int a) {
    const ir::Shape s = V(a).shape;  // a copy: appending values moves them
    if (s.empty()) return false;
    ir::Attrs attrs;
    attrs.axis = Uniform(-static_cast<int64_t>(s.size()), static_cast<int64_t>(s.size()) - 1);
    attrs.start = Pick<int64_t>({0, 0, 1, 2, 3, 5, -1, -2, -3, -7, -100, 1000});
    attrs.end = Pick<int64_t>({kToEnd, kToEnd, kToEnd, -1, -2, 0, 1, 2, 3, 7, 40, 1000, 100000000});
    attrs.step = Pick<int64_t>({1, 1, 1, 2, 3, 7});
    return Append(OpKind::kSlice, attrs, {a}) >= 0;
  }

  void ChooseOutputs() {
    std::vector<int> ops;
    for (size_t i = 0; i < p_.values_.size(); ++i) {
      if (p_.values_[i].kind == ProgramValue::Kind::kOp) ops.push_back(static_cast<int>(i));
    }
    if (ops.empty()) ops.push_back(Append(OpKind::kNeg, {}, {p_.inputs_[0]}));
    std::vector<int>& out = p_.outputs_;
    out.push_back(ops.back());
    for (int id : ops) {
      if (p_.values_[id].terminal && id != ops.back()) out.push_back(id);
    }
    const int extra = static_cast<int>(Uniform(0, 2));
    for (int i = 0; i < extra; ++i) {
      const int id = ops[Uniform(0, static_cast<int64_t>(ops.size()) - 1)];
      if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
    }
  }

  std::mt19937_64 rng_;
  RandomProgramOptions o_;
  RandomProgram p_;
  int free_symbols_ = 0;
};

RandomProgram RandomProgram::Generate(uint64_t seed, const RandomProgramOptions& options) {
  return ProgramBuilder(seed, options).Build();
}

int RandomProgram::num_ops() const { return static_cast<int>(op_kinds().size()); }

std::vector<ir::OpKind> RandomProgram::op_kinds() const {
  std::vector<ir::OpKind> kinds;
  for (const ProgramValue& v : values_) {
    if (v.kind == ProgramValue::Kind::kOp) kinds.push_back(v.op);
  }
  return kinds;
}

TraceFn RandomProgram::trace() const {
  return [values = values_, outputs = outputs_](std::span<const Value> in) {
    detail::TraceState* state = detail::TraceState::Current();
    std::vector<Value> v(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      const ProgramValue& p = values[i];
      switch (p.kind) {
        case ProgramValue::Kind::kInput:
          v[i] = in[p.input];
          break;
        case ProgramValue::Kind::kConstant:
          v[i] = state->AddConstant(p.attrs.scalar);
          break;
        case ProgramValue::Kind::kOp: {
          std::vector<Value> args;
          for (int a : p.args) args.push_back(v[a]);
          v[i] = state->AddNode(p.op, p.attrs, args);
          break;
        }
      }
    }
    std::vector<Value> out;
    for (int o : outputs) out.push_back(v[o]);
    return out;
  };
}

FunctionOptions RandomProgram::function_options() const {
  FunctionOptions options;
  for (int input : inputs_) {
    const ProgramValue& v = values_[input];
    for (size_t axis = 0; axis < v.shape.size(); ++axis) {
      std::optional<int> s = SingleSymbol(v.shape[axis]);
      if (!s.has_value()) continue;
      const ir::SymbolInfo& info = symbols_[*s];
      options.dynamic.push_back(
          {v.input, static_cast<int>(axis), Dim(info.name, info.min, info.max)});
    }
  }
  return options;
}

std::vector<ops::HostTensor> RandomProgram::Inputs(int call) const {
  std::vector<ops::HostTensor> inputs;
  for (int input : inputs_) {
    const ProgramValue& v = values_[input];
    std::vector<int64_t> dims;
    for (const SymExpr& d : v.shape) dims.push_back(d.Evaluate(call_values_[call]));
    inputs.push_back(ops::HostTensor::Random(std::move(dims), seed_ * 64 + call * 16 + v.input));
  }
  return inputs;
}

std::vector<ops::Tolerance> RandomProgram::Tolerances() const {
  std::vector<ops::Tolerance> tolerances;
  // Twice the first-order bound, for its second-order terms; a relative floor of a few ulps.
  for (int o : outputs_) tolerances.push_back({2 * values_[o].error, 4 * FLT_EPSILON});
  return tolerances;
}

std::string RandomProgram::ToString() const {
  std::vector<std::string> names;
  for (const ir::SymbolInfo& s : symbols_) names.push_back(s.name);
  std::string out = absl::StrCat("program of seed ", seed_, ":\n");
  for (size_t s = 0; s < symbols_.size(); ++s) {
    const ir::SymbolInfo& info = symbols_[s];
    absl::StrAppend(&out, "  symbol ", info.name, info.derived ? " (derived)" : "", " in [",
                    info.min, ", ", info.max, "]: ");
    for (size_t c = 0; c < call_values_.size(); ++c) {
      absl::StrAppend(&out, c ? ", " : "", call_values_[c][s]);
    }
    absl::StrAppend(&out, " at calls 1", call_values_.size() > 1 ? ", 2" : "", "\n");
  }
  for (size_t i = 0; i < values_.size(); ++i) {
    const ProgramValue& v = values_[i];
    absl::StrAppend(&out, "  %", i, " = ");
    switch (v.kind) {
      case ProgramValue::Kind::kInput:
        absl::StrAppend(&out, "input ", v.input);
        break;
      case ProgramValue::Kind::kConstant:
        absl::StrAppend(&out, "constant ", v.attrs.scalar);
        break;
      case ProgramValue::Kind::kOp: {
        std::vector<std::string> args;
        for (int a : v.args) args.push_back(absl::StrCat("%", a));
        absl::StrAppend(&out, ir::OpName(v.op), "(", absl::StrJoin(args, ", "), ")");
        const ir::Attrs& a = v.attrs;
        switch (v.op) {
          case OpKind::kReduceSum:
          case OpKind::kReduceMax:
          case OpKind::kReduceMean:
            absl::StrAppend(&out, " axis=", a.axis, a.keepdims ? " keepdims" : "");
            break;
          case OpKind::kConcat:
            absl::StrAppend(&out, " axis=", a.axis);
            break;
          case OpKind::kSlice:
            absl::StrAppend(&out, " axis=", a.axis, " start=", a.start, " end=",
                            a.end == kToEnd ? std::string("INT64_MAX") : absl::StrCat(a.end),
                            " step=", a.step);
            break;
          case OpKind::kMatMul:
            absl::StrAppend(&out, a.transpose_a ? " transpose_a" : "",
                            a.transpose_b ? " transpose_b" : "");
            break;
          case OpKind::kTranspose:
          case OpKind::kReshape:
            absl::StrAppend(&out, " [", absl::StrJoin(a.ints, ", "), "]");
            break;
          case OpKind::kLayerNorm:
          case OpKind::kRmsNorm:
            absl::StrAppend(&out, " eps=", a.eps);
            break;
          default:
            break;
        }
        break;
      }
    }
    absl::StrAppend(&out, " : ", ir::ShapeToString(v.shape, names));
    if (v.kind == ProgramValue::Kind::kOp) {
      absl::StrAppend(&out, "  (|x| <= ", v.magnitude, ", error <= ", v.error, ")");
    }
    absl::StrAppend(&out, "\n");
  }
  std::vector<std::string> outs;
  for (int o : outputs_) outs.push_back(absl::StrCat("%", o));
  absl::StrAppend(&out, "  outputs: ", absl::StrJoin(outs, ", "), "\n");
  return out;
}

}  // namespace pto::testing
