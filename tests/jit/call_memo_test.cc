// The warm call's shortcut on its own: what matches a remembered call, what does not, and the
// pointer checks a matching call still gets.
#include "jit/call_memo.h"

#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "jit/dispatch_table.h"

namespace pto::detail {
namespace {

class CallMemoTest : public ::testing::Test {
 protected:
  // Each test its own ids: entries of another test on this thread never match.
  uint64_t id_ = NewFunctionId();
  CompiledClass cls_;
  std::vector<float> a_ = std::vector<float>(6 * 4);
  std::vector<float> b_ = std::vector<float>(4 * 5);
  std::vector<float> c_ = std::vector<float>(6 * 5);
  std::vector<TensorView> in_ = {TensorView::Dense(a_.data(), {6, 4}),
                                 TensorView::Dense(b_.data(), {4, 5})};
  std::vector<TensorView> out_ = {TensorView::Dense(c_.data(), {6, 5})};
  const int64_t values_[2] = {6, 5};

  void Remember() { RememberCall(id_, in_, out_, cls_, values_); }
  const CallMemoEntry* Find() { return FindCallMemo(id_, in_, out_); }
};

TEST_F(CallMemoTest, SameViewsFindTheRememberedClassAndValues) {
  EXPECT_EQ(Find(), nullptr);
  Remember();
  const CallMemoEntry* e = Find();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->cls, &cls_);
  ASSERT_EQ(e->num_values, 2);
  EXPECT_EQ(e->values[0], 6);
  EXPECT_EQ(e->values[1], 5);
  EXPECT_EQ(e->bytes[0], 6u * 4 * sizeof(float));
  EXPECT_EQ(e->bytes[2], 6u * 5 * sizeof(float));
  // Other data pointers, same shapes: still the same call as far as the shapes go.
  std::vector<float> other(6 * 4);
  in_[0].data = other.data();
  EXPECT_EQ(Find(), e);
}

TEST_F(CallMemoTest, AnyShapeStrideDTypeOrCountChangeMisses) {
  Remember();
  ASSERT_NE(Find(), nullptr);
  const auto misses = [&](auto change) {
    std::vector<TensorView> in = in_, out = out_;
    change(in, out);
    return FindCallMemo(id_, in, out) == nullptr;
  };
  using Views = std::vector<TensorView>;
  EXPECT_TRUE(misses([](Views& in, Views&) { in[0].shape[0] = 7; }));
  EXPECT_TRUE(misses([](Views& in, Views&) { in[1].shape[1] = 6; }));
  EXPECT_TRUE(misses([](Views&, Views& out) { out[0].shape[1] = 4; }));
  EXPECT_TRUE(misses([](Views& in, Views&) { in[0].strides[0] = 8; }));
  EXPECT_TRUE(misses([](Views&, Views& out) { out[0].strides[1] = 2; }));
  EXPECT_TRUE(misses([](Views& in, Views&) { in[1].dtype = DType::kI32; }));
  EXPECT_TRUE(misses([](Views& in, Views&) {
    in[0].rank = 3;
    in[0].shape[2] = 1;
    in[0].strides[2] = 1;
  }));
  EXPECT_TRUE(misses([](Views& in, Views&) { in.pop_back(); }));
  EXPECT_TRUE(misses([](Views&, Views& out) { out.push_back(out[0]); }));
  EXPECT_TRUE(misses([](Views& in, Views& out) { std::swap(in[1], out[0]); }));
  // Another Function (another id) never matches this one's entry, even in its slot.
  EXPECT_EQ(FindCallMemo(id_ + 8, in_, out_), nullptr);
}

TEST_F(CallMemoTest, AFunctionSharingTheSlotTakesItOver) {
  Remember();
  uint64_t other = NewFunctionId();
  while (other % 8 != id_ % 8) other = NewFunctionId();
  RememberCall(other, in_, out_, cls_, values_);
  EXPECT_EQ(Find(), nullptr);
  EXPECT_NE(FindCallMemo(other, in_, out_), nullptr);
}

TEST_F(CallMemoTest, EntriesArePerThread) {
  Remember();
  bool found_elsewhere = true;
  std::thread([&] { found_elsewhere = FindCallMemo(id_, in_, out_) != nullptr; }).join();
  EXPECT_FALSE(found_elsewhere);
  EXPECT_NE(Find(), nullptr);
}

TEST_F(CallMemoTest, CallsTooLargeForAnEntryAreNotRememberedAndDropTheOldOne) {
  Remember();
  ASSERT_NE(Find(), nullptr);
  std::vector<float> x(1);
  std::vector<TensorView> many(CallMemoEntry::kMaxViews, TensorView::Dense(x.data(), {1}));
  RememberCall(id_, many, out_, cls_, values_);
  EXPECT_EQ(FindCallMemo(id_, many, out_), nullptr);
  EXPECT_EQ(Find(), nullptr);
  // Rank 8 views: 17 words each, six of them past the entry's words.
  std::vector<float> y(1);
  std::vector<TensorView> deep(6, TensorView::Dense(y.data(), {1, 1, 1, 1, 1, 1, 1, 1}));
  RememberCall(id_, deep, out_, cls_, values_);
  EXPECT_EQ(FindCallMemo(id_, deep, out_), nullptr);
}

TEST_F(CallMemoTest, PointerChecksOfAMatchingCall) {
  Remember();
  const CallMemoEntry* e = Find();
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(PointersUsable(*e, in_, out_, {}));
  const auto usable = [&](std::vector<TensorView> in, std::vector<TensorView> out,
                          std::vector<InPlaceOutput> in_place = {}) {
    return PointersUsable(*e, in, out, in_place);
  };
  std::vector<TensorView> in = in_;
  in[0].data = nullptr;
  EXPECT_FALSE(usable(in, out_));
  in = in_;
  in[1].data = reinterpret_cast<char*>(b_.data()) + 2;
  EXPECT_FALSE(usable(in, out_));
  std::vector<TensorView> out = out_;
  out[0].data = a_.data() + 3;  // inside input 0
  EXPECT_FALSE(usable(in_, out));
  std::vector<float> big(6 * 4 + 6 * 5);
  in = in_;
  in[0].data = big.data();
  out[0].data = big.data() + 24;  // adjacent, not overlapping
  EXPECT_TRUE(usable(in, out));
  out[0].data = big.data() + 23;  // one float into input 0
  EXPECT_FALSE(usable(in, out));
}

TEST_F(CallMemoTest, InPlaceOutputsNeedTheirDeclaredInputsExactMemory) {
  // A step-like call: output 0 written in place of input 0, both [6, 5].
  std::vector<float> p(6 * 5), g(6 * 5);
  std::vector<TensorView> in = {TensorView::Dense(p.data(), {6, 5}),
                                TensorView::Dense(g.data(), {6, 5})};
  std::vector<TensorView> out = {in[0]};
  RememberCall(id_, in, out, cls_, values_);
  const CallMemoEntry* e = FindCallMemo(id_, in, out);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(PointersUsable(*e, in, out, {{.output = 0, .input = 0}}));
  EXPECT_FALSE(PointersUsable(*e, in, out, {}));  // not declared
  EXPECT_FALSE(PointersUsable(*e, in, out, {{.output = 0, .input = 1}}));
  std::vector<TensorView> shifted = out;
  shifted[0].data = p.data() + 1;  // overlaps its input without being it
  EXPECT_FALSE(PointersUsable(*e, in, shifted, {{.output = 0, .input = 0}}));
}

TEST_F(CallMemoTest, EmptyViewsMayHaveNullData) {
  std::vector<TensorView> in = {TensorView::Dense(static_cast<const float*>(nullptr), {0, 4})};
  std::vector<TensorView> out = {TensorView::Dense(c_.data(), {6, 5})};
  RememberCall(id_, in, out, cls_, values_);
  const CallMemoEntry* e = FindCallMemo(id_, in, out);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->bytes[0], 0u);
  EXPECT_TRUE(PointersUsable(*e, in, out, {}));
  out[0].data = nullptr;
  EXPECT_FALSE(PointersUsable(*e, in, out, {}));
}

}  // namespace
}  // namespace pto::detail
