// Helpers shared by the reference tests.
#ifndef PTO_TESTS_OPS_REFERENCE_TEST_UTIL_H_
#define PTO_TESTS_OPS_REFERENCE_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "jit/ir/graph.h"
#include "ops/host_tensor.h"
#include "ops/reference.h"

namespace pto::ops::testing {

inline HostTensor T(std::vector<int64_t> shape, std::vector<float> data) {
  return HostTensor{std::move(shape), std::move(data)};
}

inline absl::StatusOr<HostTensor> Eval(ir::OpKind op, const ir::Attrs& attrs,
                                       const std::vector<HostTensor>& inputs) {
  std::vector<const HostTensor*> ptrs;
  for (const HostTensor& t : inputs) ptrs.push_back(&t);
  return EvaluateOp(op, attrs, ptrs);
}

// Checks shape and values; NaN must meet NaN, infinities must be equal.
inline void ExpectTensor(const absl::StatusOr<HostTensor>& got, std::vector<int64_t> shape,
                         std::vector<double> want, double tol = 1e-6) {
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->shape, shape);
  ASSERT_EQ(got->data.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got->data[i];
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(g)) << "index " << i << ": got " << g;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(g, want[i]) << "index " << i;
    } else {
      EXPECT_NEAR(g, want[i], tol * (1 + std::fabs(want[i]))) << "index " << i;
    }
  }
}

inline ir::Attrs AxisAttrs(int64_t axis, bool keepdims = false) {
  ir::Attrs a;
  a.axis = axis;
  a.keepdims = keepdims;
  return a;
}

}  // namespace pto::ops::testing

#endif  // PTO_TESTS_OPS_REFERENCE_TEST_UTIL_H_
