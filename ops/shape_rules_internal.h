// Helpers shared by the shape-rule files of ops/. Not part of the ops/ interface.
#ifndef PTO_OPS_SHAPE_RULES_INTERNAL_H_
#define PTO_OPS_SHAPE_RULES_INTERNAL_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/ir/graph.h"
#include "jit/ir/sym_expr.h"

namespace pto::ops::internal {

// What every rule needs to phrase its errors, and the graph's symbols (the slice rule adds
// derived symbols to them).
struct RuleContext {
  std::string op;                                  // ir::OpName of the op
  std::vector<std::string> names;                  // symbol names for rendering shapes
  std::vector<ir::SymbolInfo>* symbols = nullptr;  // null: concrete shapes only
  std::vector<ir::ShapeGuard>* guards = nullptr;   // null: guards are not wanted
  std::string Shape(const ir::Shape& s) const { return ir::ShapeToString(s, names); }
  std::string Dim(const ir::SymExpr& d) const { return d.ToString(names); }
};

// Normalizes `axis` in [-rank, rank) to [0, rank); InvalidArgument naming input `input` and
// its shape otherwise.
absl::StatusOr<int64_t> NormalizeAxis(const RuleContext& ctx, int64_t axis, int input,
                                      const ir::Shape& shape);

// Numpy broadcasting of `b` (input b_index) against `a` (input a_index). `axis_label` is
// "axis" or "batch axis" for the error message.
absl::StatusOr<ir::Shape> Broadcast(const RuleContext& ctx, const ir::Shape& a, int a_index,
                                    const ir::Shape& b, int b_index, const char* axis_label);

// numpy broadcasting of x to attrs.shape (x's dims equal the target's or are 1).
absl::StatusOr<ir::Shape> BroadcastToShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                           const ir::Shape& x);
absl::StatusOr<ir::Shape> MatMulShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                      const ir::Shape& a, const ir::Shape& b);
absl::StatusOr<ir::Shape> TransposeShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                         const ir::Shape& x);
absl::StatusOr<ir::Shape> ReshapeShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                       const ir::Shape& x);
absl::StatusOr<ir::Shape> ConcatShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                      std::span<const ir::Shape> inputs);
absl::StatusOr<ir::Shape> SliceShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                     const ir::Shape& x);

absl::StatusOr<ir::Shape> WhereShape(const RuleContext& ctx, std::span<const ir::Shape> inputs);
absl::StatusOr<ir::Shape> IotaShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                    const ir::Shape& like);
absl::StatusOr<ir::Shape> OneHotShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                      const ir::Shape& indices);

absl::StatusOr<ir::Shape> GatherShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                      const ir::Shape& x, const ir::Shape& indices);
absl::StatusOr<ir::Shape> ScatterAddShape(const RuleContext& ctx, const ir::Attrs& attrs,
                                          std::span<const ir::Shape> inputs);

// The dtype rule (InferDType after its arity check; ops/shape_rules_dtype.cc).
absl::StatusOr<ir::DType> DTypeRule(ir::OpKind op, const ir::Attrs& attrs,
                                    std::span<const ir::DType> inputs);

}  // namespace pto::ops::internal

#endif  // PTO_OPS_SHAPE_RULES_INTERNAL_H_
