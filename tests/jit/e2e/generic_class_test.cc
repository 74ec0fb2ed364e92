// The generic shape class (FunctionOptions::max_shape_classes): once the cap is reached, calls
// no compiled class takes run one class generic over the declared ranges, compiled once and
// logged once, so a serving loop over the whole ranges never fails and compiles at most
// cap + 1 classes. Its results match the reference at every size of the ranges (0, 1 and the
// bounds included); dispatch still prefers a specific class; Precompile past the cap compiles
// the generic class; calls from many threads while it compiles wait for it.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;

constexpr int64_t kFeatures = 8;

// A small block over x [batch, seq, 8]: a linear layer after a layer norm, a softmax over seq
// (a symbolic row length) and the sum over seq (a symbolic reduction).
std::vector<Value> Block(std::span<const Value> v) {
  Value h = linear(layer_norm(v[0], v[1], v[2]), v[3], v[4]);  // [batch, seq, 8]
  Value over_seq = softmax(transpose(v[0], 1, 2));             // [batch, 8, seq]
  return {gelu(h) + v[0] * reduce_sum(v[0], 1, true), over_seq};
}

std::vector<HostTensor> Weights() {
  return {HostTensor::Random({kFeatures}, 1, 0.9f, 1.1f), HostTensor::Random({kFeatures}, 2),
          HostTensor::Random({kFeatures, kFeatures}, 3), HostTensor::Random({kFeatures}, 4)};
}

std::vector<HostTensor> Inputs(int64_t batch, int64_t seq, uint64_t seed,
                               const std::vector<HostTensor>& weights) {
  std::vector<HostTensor> in = {HostTensor::Random({batch, seq, kFeatures}, seed)};
  in.insert(in.end(), weights.begin(), weights.end());
  return in;
}

FunctionOptions BatchBySeq(int64_t max_seq, int max_shape_classes) {
  FunctionOptions o;
  o.dynamic = {{0, 0, Dim("batch", 1, 64)}, {0, 1, Dim("seq", 1, max_seq)}};
  o.max_shape_classes = max_shape_classes;
  return o;
}

// The tolerance of the block: a reduction over up to `seq` values beside an 8-long one.
ops::Tolerance BlockTolerance(int64_t seq) {
  return ops::Combine(ops::OpTolerance(ir::OpKind::kLayerNorm, kFeatures),
                      ops::OpTolerance(ir::OpKind::kReduceSum, std::max<int64_t>(seq, 1)));
}

// Log messages, from any thread.
struct Captured {
  std::mutex mu;
  std::vector<std::pair<LogLevel, std::string>> messages;
  int Count(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu);
    return static_cast<int>(std::count_if(messages.begin(), messages.end(), [&](const auto& m) {
      return m.second.find(text) != std::string::npos;
    }));
  }
};

RuntimeOptions Capturing(Captured& c) {
  RuntimeOptions o;
  o.log_sink = [&c](LogLevel level, std::string_view m) {
    std::lock_guard<std::mutex> lock(c.mu);
    c.messages.emplace_back(level, std::string(m));
  };
  return o;
}

TEST(GenericClass, ServingLoopOverTheWholeRangesStaysWithinTheCap) {
  constexpr int kCalls = 2000, kCap = 4, kCheckEvery = 50;
  constexpr uint64_t kSeed = 20230;
  std::printf("serving loop: %d calls, seed %llu\n", kCalls,
              static_cast<unsigned long long>(kSeed));
  Captured log;
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(Capturing(log));
  TraceFn trace = Block;
  auto fn = rt->JitTraced("served", 5, trace, BatchBySeq(512, kCap));
  ASSERT_TRUE(fn.ok()) << fn.status();
  const std::vector<HostTensor> weights = Weights();
  std::mt19937_64 random(kSeed);
  std::uniform_int_distribution<int64_t> batches(1, 64), seqs(1, 512);
  int errors = 0, checked = 0;
  std::string first_error;
  for (int call = 0; call < kCalls; ++call) {
    const int64_t batch = batches(random), seq = seqs(random);
    const std::vector<HostTensor> in = Inputs(batch, seq, call, weights);
    absl::StatusOr<std::vector<HostTensor>> got = testing::RunPto(**fn, in);
    if (!got.ok()) {
      if (errors++ == 0) first_error = got.status().ToString();
      continue;
    }
    if (call % kCheckEvery != 0) continue;
    ++checked;
    absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(trace, in);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(testing::Compare(*got, *want, BlockTolerance(seq)), "")
        << "call " << call << ": batch " << batch << ", seq " << seq << " (seed " << kSeed << ")";
  }
  EXPECT_EQ(errors, 0) << first_error << " (seed " << kSeed << ")";
  EXPECT_EQ(checked, kCalls / kCheckEvery);
  const FunctionStats st = (*fn)->stats();
  std::printf(
      "serving loop: %lld calls, %d errors, %lld compilations, %lld shape classes (%lld "
      "generic), %lld kernels compiled\n",
      static_cast<long long>(st.calls), errors, static_cast<long long>(st.compiles),
      static_cast<long long>(st.shape_classes), static_cast<long long>(st.generic_classes),
      static_cast<long long>(st.kernels_compiled));
  EXPECT_EQ(st.calls, kCalls);
  EXPECT_LE(st.compiles, kCap + 1);
  EXPECT_EQ(st.shape_classes, st.compiles);
  EXPECT_EQ(st.generic_classes, 1);
  EXPECT_EQ(st.traces, 1);
  EXPECT_EQ(log.Count("reached max_shape_classes"), 1);
}

// Calls from several threads, all past the cap at once: one compile of the generic class, one
// log line at warning level naming the function, the cap and the class.
TEST(GenericClass, CompiledOnceAndLoggedOnceWhileManyThreadsCall) {
  Captured log;
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(Capturing(log));
  TraceFn trace = Block;
  auto fn = rt->JitTraced("raced", 5, trace, BatchBySeq(512, 2));
  ASSERT_TRUE(fn.ok()) << fn.status();
  const std::vector<HostTensor> weights = Weights();
  ASSERT_TRUE(testing::RunPto(**fn, Inputs(2, 5, 1, weights)).ok());  // [2..3] x [4..7]
  ASSERT_TRUE(testing::RunPto(**fn, Inputs(2, 9, 2, weights)).ok());  // [2..3] x [8..15]
  EXPECT_EQ(log.Count("reached max_shape_classes"), 0);
  constexpr int kThreads = 4, kCallsEach = 5;
  const int64_t sizes[kThreads][2] = {{1, 1}, {33, 100}, {64, 512}, {5, 17}};
  std::atomic<int> ready{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<HostTensor> in = Inputs(sizes[t][0], sizes[t][1], 10 + t, weights);
      ready.fetch_add(1);
      while (ready.load() < kThreads) {
      }
      for (int c = 0; c < kCallsEach; ++c) {
        if (!testing::RunPto(**fn, in).ok()) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  const FunctionStats st = (*fn)->stats();
  EXPECT_EQ(st.compiles, 3);
  EXPECT_EQ(st.generic_classes, 1);
  ASSERT_EQ(log.Count("reached max_shape_classes"), 1);
  for (const auto& [level, m] : log.messages) {
    if (m.find("reached max_shape_classes") == std::string::npos) continue;
    EXPECT_EQ(level, LogLevel::kWarning);
    EXPECT_THAT(m, ::testing::HasSubstr(
                       "function 'raced' reached max_shape_classes (2): calls no compiled class "
                       "serves run its class batch=[1..64],seq=[1..512], generic over the "
                       "declared ranges"));
  }
  // Each thread's sizes give the reference's answer.
  for (int t = 0; t < kThreads; ++t) {
    SCOPED_TRACE(t);
    EXPECT_EQ(
        testing::DiffFromReference(**fn, trace, Inputs(sizes[t][0], sizes[t][1], 10 + t, weights),
                                   BlockTolerance(sizes[t][1])),
        "");
  }
  EXPECT_EQ((*fn)->stats().compiles, 3);
}

// A range from 0: the generic class is symbolic at 0 and 1 too (the specific classes compile
// them as constants), and at the bounds.
TEST(GenericClass, MatchesTheReferenceAtZeroOneAndTheBounds) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  TraceFn trace = [](std::span<const Value> v) {
    Value h = matmul(v[0], v[1]);  // [n, 16]
    return std::vector<Value>{softmax(h) + 1.0f, reduce_sum(v[0], 0, true),
                              softmax(transpose(h, 0, 1))};
  };
  FunctionOptions o;
  o.dynamic = {{0, 0, Dim("n", 0, 70)}};
  o.max_shape_classes = 1;
  auto fn = rt->JitTraced("from_zero", 2, trace, o);
  ASSERT_TRUE(fn.ok()) << fn.status();
  const HostTensor w = HostTensor::Random({12, 16}, 5);
  const ops::Tolerance tol = ops::OpTolerance(ir::OpKind::kMatMul, 70);
  for (int64_t n : {5, 0, 1, 2, 3, 8, 17, 64, 69, 70}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(testing::DiffFromReference(**fn, trace, {HostTensor::Random({n, 12}, n + 1), w}, tol),
              "");
  }
  EXPECT_EQ((*fn)->stats().compiles, 2);
  EXPECT_EQ((*fn)->stats().generic_classes, 1);
}

std::vector<std::string> KernelNames(Function& fn, int64_t n, const HostTensor& w) {
  const HostTensor x = HostTensor::Random({n, 12}, 9);
  std::vector<float> out(n * 16);
  const std::vector<TensorView> in = testing::Views({x, w});
  const TensorView out_view = TensorView::Dense(out.data(), {n, 16});
  absl::StatusOr<std::vector<KernelProfile>> profile = fn.Profile(in, {&out_view, 1}, 1);
  EXPECT_TRUE(profile.ok()) << profile.status();
  std::vector<std::string> names;
  if (profile.ok()) {
    for (const KernelProfile& k : *profile) names.push_back(k.kernel);
  }
  return names;
}

// After the cap, a size a specific class takes still runs that class's kernels.
TEST(GenericClass, DispatchPrefersASpecificClass) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("prefers", [](Value x, Value w) { return softmax(matmul(x, w)); },
                    {.dynamic = {{0, 0, Dim("n", 1, 256)}}, .max_shape_classes = 1});
  ASSERT_TRUE(fn.ok()) << fn.status();
  const HostTensor w = HostTensor::Random({12, 16}, 5);
  const std::vector<std::string> one = KernelNames(**fn, 1, w);  // the class n = 1
  const std::vector<std::string> generic = KernelNames(**fn, 100, w);
  ASSERT_EQ((*fn)->stats().generic_classes, 1);
  EXPECT_NE(one, generic);
  EXPECT_EQ(KernelNames(**fn, 1, w), one);
  EXPECT_EQ(KernelNames(**fn, 3, w), generic);
  EXPECT_EQ((*fn)->stats().compiles, 2);
}

TEST(GenericClass, PrecompilePastTheCapCompilesTheGenericClass) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit("pre", [](Value x) { return softmax(x) * 2.0f; },
                    {.dynamic = {{0, 0, Dim("rows", 1, 1024)}}, .max_shape_classes = 1});
  ASSERT_TRUE(fn.ok()) << fn.status();
  ASSERT_TRUE((*fn)->Precompile({{5, 8}}).ok());
  EXPECT_EQ((*fn)->stats().compiles, 1);
  ASSERT_TRUE((*fn)->Precompile({{40, 8}}).ok());
  EXPECT_EQ((*fn)->stats().compiles, 2);
  EXPECT_EQ((*fn)->stats().generic_classes, 1);
  ASSERT_TRUE((*fn)->Precompile({{1000, 8}}).ok());
  for (int64_t rows : {1, 7, 300, 1024}) {
    SCOPED_TRACE(rows);
    const HostTensor x = HostTensor::Random({rows, 8}, rows);
    EXPECT_TRUE(testing::RunPto(**fn, {x}).ok());
  }
  EXPECT_EQ((*fn)->stats().compiles, 2);
  // Outside the declared range is still refused.
  absl::Status s = (*fn)->Precompile({{1025, 8}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("outside the declared range [1, 1024]"));
}

}  // namespace
}  // namespace pto
