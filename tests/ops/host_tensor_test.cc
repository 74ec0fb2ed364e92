// HostTensor's dtypes: f32 in `data`, f64 and i32 in `wide`, read and written through double.
#include "ops/host_tensor.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "jit/ir/dtype.h"

namespace pto::ops {
namespace {

using ir::DType;

TEST(HostTensorDTypeTest, AggregateInitializationIsF32) {
  const HostTensor t{{2}, {1.5f, -2.0f}};
  EXPECT_EQ(t.dtype, DType::kF32);
  EXPECT_TRUE(t.wide.empty());
  EXPECT_EQ(t.size(), 2);
  EXPECT_EQ(t.at(0), 1.5);
  EXPECT_EQ(t.at(1), -2.0);
}

TEST(HostTensorDTypeTest, ZerosOfEachDType) {
  const HostTensor f = HostTensor::Zeros({2, 3}, DType::kF32);
  EXPECT_EQ(f.dtype, DType::kF32);
  EXPECT_EQ(f.data, std::vector<float>(6, 0.0f));
  EXPECT_TRUE(f.wide.empty());
  for (DType d : {DType::kF64, DType::kI32}) {
    const HostTensor w = HostTensor::Zeros({3, 2}, d);
    EXPECT_EQ(w.dtype, d);
    EXPECT_TRUE(w.data.empty());
    EXPECT_EQ(w.wide, std::vector<double>(6, 0.0));
    EXPECT_EQ(w.size(), 6);
  }
  EXPECT_EQ(HostTensor::Zeros({}, DType::kF64).size(), 1);
  EXPECT_EQ(HostTensor::Zeros({4, 0}, DType::kI32).size(), 0);
}

TEST(HostTensorDTypeTest, SetRoundsToTheDType) {
  const double third = 1.0 / 3.0;
  HostTensor f = HostTensor::Zeros({1}, DType::kF32);
  f.Set(0, third);
  EXPECT_EQ(f.data[0], static_cast<float>(third));
  EXPECT_NE(f.at(0), third);
  HostTensor d = HostTensor::Zeros({1}, DType::kF64);
  d.Set(0, third);
  EXPECT_EQ(d.at(0), third);
  HostTensor i = HostTensor::Zeros({3}, DType::kI32);
  i.Set(0, -7);
  i.Set(1, std::numeric_limits<int32_t>::max());
  i.Set(2, std::numeric_limits<int32_t>::min());
  EXPECT_EQ(i.I32Values(), (std::vector<int32_t>{-7, std::numeric_limits<int32_t>::max(),
                                                 std::numeric_limits<int32_t>::min()}));
}

TEST(HostTensorDTypeTest, I32ValuesRoundTrip) {
  const std::vector<int32_t> values = {0, 1, -1, 2147483647, -2147483647 - 1, 12345};
  const HostTensor t = HostTensor::I32({2, 3}, values);
  EXPECT_EQ(t.dtype, DType::kI32);
  EXPECT_EQ(t.NumElements(), 6);
  EXPECT_EQ(t.size(), 6);
  EXPECT_TRUE(t.data.empty());
  EXPECT_EQ(t.I32Values(), values);
  EXPECT_EQ(t.at(3), 2147483647.0);
  EXPECT_EQ(t.at(4), -2147483648.0);
}

TEST(HostTensorDTypeTest, ToF64WidensF32AndKeepsTheOthers) {
  const HostTensor f{{3}, {0.1f, -2.5f, 3e38f}};
  const HostTensor d = f.ToF64();
  EXPECT_EQ(d.dtype, DType::kF64);
  EXPECT_EQ(d.shape, f.shape);
  EXPECT_TRUE(d.data.empty());
  EXPECT_EQ(d.wide, (std::vector<double>{0.1f, -2.5f, 3e38f}));
  const HostTensor i = HostTensor::I32({2}, {4, -5});
  EXPECT_EQ(i.ToF64().dtype, DType::kI32);
  EXPECT_EQ(i.ToF64().I32Values(), i.I32Values());
  EXPECT_EQ(d.ToF64().wide, d.wide);
}

TEST(HostTensorDTypeTest, ToF32RoundsF64AndKeepsTheOthers) {
  HostTensor d = HostTensor::Zeros({2}, DType::kF64);
  d.Set(0, 1.0 / 3.0);
  d.Set(1, 1e300);
  const HostTensor f = d.ToF32();
  EXPECT_EQ(f.dtype, DType::kF32);
  EXPECT_TRUE(f.wide.empty());
  EXPECT_EQ(f.data[0], 1.0f / 3.0f);
  EXPECT_TRUE(std::isinf(f.data[1]));
  const HostTensor i = HostTensor::I32({1}, {9});
  EXPECT_EQ(i.ToF32().dtype, DType::kI32);
  const HostTensor same{{1}, {2.0f}};
  EXPECT_EQ(same.ToF32().data, same.data);
  // f32 -> f64 -> f32 is exact.
  const HostTensor r = HostTensor::Random({64}, 3);
  EXPECT_EQ(r.ToF64().ToF32().data, r.data);
}

TEST(HostTensorDTypeTest, RandomAndFilledMakeF32) {
  EXPECT_EQ(HostTensor::Random({4}, 1).dtype, DType::kF32);
  EXPECT_EQ(HostTensor::Filled({4}, 2.0f).dtype, DType::kF32);
  EXPECT_TRUE(HostTensor::Random({4}, 1).wide.empty());
}

TEST(HostTensorDTypeTest, DTypeClasses) {
  EXPECT_TRUE(IsHostDType(DType::kF32));
  EXPECT_TRUE(IsHostDType(DType::kF64));
  EXPECT_TRUE(IsHostDType(DType::kI32));
  EXPECT_FALSE(IsHostDType(DType::kF16));
  EXPECT_FALSE(IsHostDType(DType::kBF16));
  EXPECT_FALSE(IsHostDType(DType::kI8));
  EXPECT_TRUE(IsFloatDType(DType::kF64));
  EXPECT_FALSE(IsFloatDType(DType::kI32));
  EXPECT_EQ(ir::DTypeName(DType::kF64), "f64");
}

}  // namespace
}  // namespace pto::ops
