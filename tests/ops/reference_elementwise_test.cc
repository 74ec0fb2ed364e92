// Reference elementwise ops against hand-computed values.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/ir/graph.h"
#include "ops/reference.h"
#include "reference_test_util.h"

namespace pto::ops {
namespace {

using ir::OpKind;
using testing::Eval;
using testing::ExpectTensor;
using ::testing::HasSubstr;
using testing::T;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(ReferenceElementwiseTest, BinaryBroadcasting) {
  const HostTensor a = T({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectTensor(Eval(OpKind::kAdd, {}, {a, T({3}, {10, 20, 30})}), {2, 3}, {11, 22, 33, 14, 25, 36});
  ExpectTensor(Eval(OpKind::kSub, {}, {T({2, 1}, {1, 2}), T({1, 3}, {1, 2, 3})}), {2, 3},
               {0, -1, -2, 1, 0, -1});
  ExpectTensor(Eval(OpKind::kMul, {}, {a, T({}, {2})}), {2, 3}, {2, 4, 6, 8, 10, 12});
  ExpectTensor(Eval(OpKind::kMul, {}, {T({}, {3}), T({}, {-2})}), {}, {-6});
  ExpectTensor(Eval(OpKind::kDiv, {}, {T({4}, {1, -1, 0, 3}), T({4}, {0, 0, 0, 4})}), {4},
               {kInf, -kInf, kNaN, 0.75});
  // Size-1 dims broadcast in both directions, with a leading missing dim.
  ExpectTensor(Eval(OpKind::kAdd, {}, {T({2, 1, 2}, {1, 2, 3, 4}), T({2, 1}, {10, 20})}), {2, 2, 2},
               {11, 12, 21, 22, 13, 14, 23, 24});
}

TEST(ReferenceElementwiseTest, MaxMinPropagateNaN) {
  const HostTensor a = T({4}, {1, -2, static_cast<float>(kNaN), 5});
  const HostTensor b = T({4}, {0, 3, 1, static_cast<float>(kNaN)});
  ExpectTensor(Eval(OpKind::kMax, {}, {a, b}), {4}, {1, 3, kNaN, kNaN});
  ExpectTensor(Eval(OpKind::kMin, {}, {a, b}), {4}, {0, -2, kNaN, kNaN});
}

TEST(ReferenceElementwiseTest, SizeZeroAndSizeOne) {
  ExpectTensor(Eval(OpKind::kAdd, {}, {T({0, 3}, {}), T({3}, {1, 2, 3})}), {0, 3}, {});
  ExpectTensor(Eval(OpKind::kAdd, {}, {T({0, 3}, {}), T({1, 1}, {1})}), {0, 3}, {});
  ExpectTensor(Eval(OpKind::kExp, {}, {T({2, 0}, {})}), {2, 0}, {});
  ExpectTensor(Eval(OpKind::kMul, {}, {T({1, 1}, {3}), T({1}, {4})}), {1, 1}, {12});
}

TEST(ReferenceElementwiseTest, Unary) {
  const HostTensor x = T({3}, {-1, 0, 1});
  ExpectTensor(Eval(OpKind::kNeg, {}, {x}), {3}, {1, 0, -1});
  ExpectTensor(Eval(OpKind::kAbs, {}, {T({3}, {-1.5, 0, 2})}), {3}, {1.5, 0, 2});
  ExpectTensor(Eval(OpKind::kExp, {}, {x}), {3}, {1 / M_E, 1, M_E});
  ExpectTensor(Eval(OpKind::kLog, {}, {T({4}, {1, static_cast<float>(M_E), 0, -1})}), {4},
               {0, 1, -kInf, kNaN});
  ExpectTensor(Eval(OpKind::kSqrt, {}, {T({3}, {4, 2, -1})}), {3}, {2, M_SQRT2, kNaN});
  ExpectTensor(Eval(OpKind::kRsqrt, {}, {T({3}, {4, 0.25, 0})}), {3}, {0.5, 2, kInf});
  ExpectTensor(Eval(OpKind::kTanh, {}, {T({3}, {0.5, 0, -20})}), {3}, {0.46211715726000974, 0, -1});
  ExpectTensor(Eval(OpKind::kSigmoid, {}, {T({4}, {0, 2, -2, -200})}), {4},
               {0.5, 0.8807970779778823, 0.11920292202211755, 0});
  ExpectTensor(Eval(OpKind::kRelu, {}, {T({4}, {-1, 0, 2.5, static_cast<float>(kNaN)})}), {4},
               {0, 0, 2.5, kNaN});
  // gelu_tanh(1) = 0.5(1 + tanh(sqrt(2/pi) * 1.044715)).
  ExpectTensor(Eval(OpKind::kGeluTanh, {}, {T({3}, {1, -1, 0})}), {3},
               {0.8411919906082768, -0.15880800939172324, 0});
  // gelu_erf(x) = x * Phi(x).
  ExpectTensor(Eval(OpKind::kGeluErf, {}, {T({3}, {1, -1, 2})}), {3},
               {0.8413447460685429, -0.15865525393145707, 1.9544997361036416});
  // gelu_erf'(x) = Phi(x) + x phi(x).
  ExpectTensor(Eval(OpKind::kGeluErfGrad, {}, {T({3}, {1, -1, 0})}), {3},
               {1.0833154705876864, -0.08331547058768629, 0.5});
  ExpectTensor(Eval(OpKind::kSilu, {}, {T({3}, {1, 0, -1})}), {3},
               {0.7310585786300049, 0, -0.2689414213699951});
  ExpectTensor(Eval(OpKind::kCast, {}, {T({2}, {1.25, -3})}), {2}, {1.25, -3});
  ExpectTensor(Eval(OpKind::kExp, {}, {T({}, {0})}), {}, {1});
}

TEST(ReferenceElementwiseTest, Constant) {
  ir::Attrs attrs;
  attrs.scalar = 0.125;
  ExpectTensor(Eval(OpKind::kConstant, attrs, {}), {}, {0.125});
}

TEST(ReferenceElementwiseTest, Errors) {
  absl::StatusOr<HostTensor> r = Eval(OpKind::kAdd, {}, {T({2, 3}, {1, 2}), T({3}, {1, 2, 3})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("add: input 0 shape [2, 3] needs 6 values but has 2"));

  r = Eval(OpKind::kAdd, {}, {T({2, 3}, std::vector<float>(6)), T({2}, {1, 2})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("add: input 1 shape [2] is not broadcastable with input 0 shape [2, 3] "
                        "(axis 1: 2 vs 3)"));

  r = Eval(OpKind::kInput, {}, {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("RunReference"));

  ir::Attrs to_f16;
  to_f16.dtype = ir::DType::kF16;
  r = Eval(OpKind::kCast, to_f16, {T({1}, {1})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("cast: target dtype f16"));

  r = Eval(OpKind::kNeg, {}, {T({-1}, {})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("neg: input 0 shape [-1]"));

  r = EvaluateOp(OpKind::kNeg, {}, std::vector<const HostTensor*>{nullptr});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("neg: input 0 is null"));
}

}  // namespace
}  // namespace pto::ops
