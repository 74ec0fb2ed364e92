// Outputs declared in place of inputs (FunctionOptions::in_place_outputs) through the Runtime:
// an SGD step and an accumulator updated in their own buffers call after call, the copy
// fallback when the donated input is read after the output's kernel (or by the writer at other
// elements), separate memory leaving the input alone, the allocating call, more threads, and
// every refusal with its exact message.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

using ops::HostTensor;
using ::testing::HasSubstr;

TensorView ViewOf(HostTensor& t) { return TensorView::Dense(t.data.data(), t.shape); }

// p - lr * g: an elementwise kernel reading p only at the element it writes.
const TraceFn kSgd = [](std::span<const Value> v) {
  return std::vector<Value>{v[0] - v[1] * 0.05f};
};

FunctionOptions Donate(int output, int input) {
  FunctionOptions o;
  o.in_place_outputs = {{.output = output, .input = input}};
  return o;
}

// One rounding of a multiply and one of a subtract (or an FMA): the reference and pto differ
// by at most a few ulps of values below 4 in magnitude.
constexpr ops::Tolerance kStepTolerance{.abs = 1e-6, .rel = 1e-6};

std::string DumpExec(Function& fn, const std::vector<std::vector<int64_t>>& shapes) {
  absl::StatusOr<std::string> text = fn.Dump(Stage::kExec, shapes);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

TEST(InPlaceOutputs, SgdStepsUpdateTheParametersInTheirOwnBuffer) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->JitTraced("sgd", 2, kSgd, Donate(0, 0));
  ASSERT_TRUE(fn.ok()) << fn.status();
  EXPECT_THAT(DumpExec(**fn, {{33, 70}, {33, 70}}),
              HasSubstr("in-place outputs:\n  output 0 over input 0: in place ("));
  HostTensor p = HostTensor::Random({33, 70}, 1);
  const float* const storage = p.data.data();
  for (int step = 0; step < 25; ++step) {
    HostTensor g = HostTensor::Random({33, 70}, 100 + step);
    absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(kSgd, {p, g});
    ASSERT_TRUE(want.ok()) << want.status();
    const TensorView pv = ViewOf(p);
    ASSERT_TRUE((**fn)({pv, ViewOf(g)}, {pv}).ok()) << "step " << step;
    EXPECT_EQ(testing::Compare({p}, *want, kStepTolerance), "") << "step " << step;
  }
  EXPECT_EQ(p.data.data(), storage);
  EXPECT_EQ((*fn)->stats().compiles, 1);
}

// acc + x four times: each call is one f32 add per element, as the host's loop below, so the
// result equals the host's f32 sum exactly, and the exact (double) sum within the rounding of
// four f32 additions: 4 * 2^-24 * sum |x_i|.
TEST(InPlaceOutputs, AccumulatorSumsFourCalls) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit(
      "accumulate", [](Value acc, Value x) { return acc + x; }, Donate(0, 0));
  ASSERT_TRUE(fn.ok()) << fn.status();
  HostTensor acc = HostTensor::Filled({16, 129}, 0.0f);
  std::vector<float> host(acc.data.size(), 0.0f);
  std::vector<double> exact(acc.data.size(), 0.0), magnitude(acc.data.size(), 0.0);
  for (int call = 0; call < 4; ++call) {
    HostTensor x = HostTensor::Random({16, 129}, 7 + call, -3.0f, 3.0f);
    const TensorView av = ViewOf(acc);
    ASSERT_TRUE((**fn)({av, ViewOf(x)}, {av}).ok());
    for (size_t i = 0; i < host.size(); ++i) {
      host[i] += x.data[i];
      exact[i] += x.data[i];
      magnitude[i] += std::fabs(x.data[i]);
    }
  }
  EXPECT_EQ(acc.data, host);
  for (size_t i = 0; i < host.size(); ++i) {
    ASSERT_LE(std::fabs(acc.data[i] - exact[i]), 4 * std::ldexp(magnitude[i], -24)) << i;
  }
}

// p is read again after the kernel writing p - g (a matmul reads it later): the output goes to
// a temp copied over p after that reader, and both outputs are right.
TEST(InPlaceOutputs, LaterReaderOfTheInputGetsTheCopyFallback) {
  const TraceFn trace = [](std::span<const Value> v) {
    Value updated = v[0] - v[1];
    return std::vector<Value>{updated, matmul(v[0], v[2]) * 2.0f};
  };
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->JitTraced("later_reader", 3, trace, Donate(0, 0));
  ASSERT_TRUE(fn.ok()) << fn.status();
  const std::vector<std::vector<int64_t>> shapes = {{12, 20}, {12, 20}, {20, 9}};
  EXPECT_THAT(DumpExec(**fn, shapes),
              HasSubstr("output 0 over input 0: copied after the input's last reader ("));
  std::vector<HostTensor> in = {HostTensor::Random(shapes[0], 1), HostTensor::Random(shapes[1], 2),
                                HostTensor::Random(shapes[2], 3)};
  absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(trace, in);
  ASSERT_TRUE(want.ok()) << want.status();
  HostTensor mm({{12, 9}, std::vector<float>(12 * 9)});
  const TensorView pv = ViewOf(in[0]);
  ASSERT_TRUE((**fn)({pv, ViewOf(in[1]), ViewOf(in[2])}, {pv, ViewOf(mm)}).ok());
  EXPECT_EQ(
      testing::Compare({in[0], mm}, *want,
                       ops::Combine(kStepTolerance, ops::OpTolerance(ir::OpKind::kMatMul, 20))),
      "");
}

// Each decision is logged at kDebug with its reason.
TEST(InPlaceOutputs, DecisionsAreLogged) {
  std::vector<std::string> lines;
  RuntimeOptions options;
  options.log_level = LogLevel::kDebug;
  options.log_sink = [&lines](LogLevel level, std::string_view message) {
    if (level == LogLevel::kDebug) lines.emplace_back(message);
  };
  std::unique_ptr<Runtime> rt = testing::OpenRuntime(options);
  const TraceFn trace = [](std::span<const Value> v) {
    return std::vector<Value>{v[0] - v[1], reduce_sum(v[0], -1)};
  };
  auto fn = rt->JitTraced("later_reader", 2, trace, Donate(0, 0));
  ASSERT_TRUE(fn.ok()) << fn.status();
  ASSERT_TRUE((*fn)->Precompile({{4, 8}, {4, 8}}).ok());
  std::vector<std::string> decisions;
  for (const std::string& l : lines) {
    if (l.starts_with("pto: output 0 over input 0")) decisions.push_back(l);
  }
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_THAT(decisions[0],
              ::testing::MatchesRegex("pto: output 0 over input 0: copied after the input's last "
                                      "reader \\(call 1 \\([^)]*\\) reads input 0 "
                                      "after call 0 \\([^)]*\\) writes output "
                                      "0\\)"));
}

// The writer itself reads p at other elements (a transpose, a matmul): copied, still right.
TEST(InPlaceOutputs, WriterReadingOtherElementsGetsTheCopyFallback) {
  const TraceFn transposed = [](std::span<const Value> v) {
    return std::vector<Value>{transpose(v[0], {1, 0}) + v[1]};
  };
  const TraceFn product = [](std::span<const Value> v) {
    return std::vector<Value>{matmul(v[0], v[1])};
  };
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  for (const auto& [name, trace] : {std::pair{"transposed", transposed}, {"product", product}}) {
    SCOPED_TRACE(name);
    auto fn = rt->JitTraced(name, 2, trace, Donate(0, 0));
    ASSERT_TRUE(fn.ok()) << fn.status();
    EXPECT_THAT(DumpExec(**fn, {{17, 17}, {17, 17}}),
                HasSubstr("output 0 over input 0: copied after the input's last reader ("));
    std::vector<HostTensor> in = {HostTensor::Random({17, 17}, 4), HostTensor::Random({17, 17}, 5)};
    absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(trace, in);
    ASSERT_TRUE(want.ok()) << want.status();
    const TensorView pv = ViewOf(in[0]);
    ASSERT_TRUE((**fn)({pv, ViewOf(in[1])}, {pv}).ok());
    EXPECT_EQ(testing::Compare({in[0]}, *want, ops::OpTolerance(ir::OpKind::kMatMul, 17)), "");
  }
}

TEST(InPlaceOutputs, SeparateMemoryIsAnOrdinaryOutput) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->JitTraced("sgd", 2, kSgd, Donate(0, 0));
  ASSERT_TRUE(fn.ok()) << fn.status();
  HostTensor p = HostTensor::Random({8, 40}, 1), g = HostTensor::Random({8, 40}, 2);
  const HostTensor before = p;
  HostTensor out = HostTensor::Filled({8, 40}, 0.0f);
  ASSERT_TRUE((**fn)({ViewOf(p), ViewOf(g)}, {ViewOf(out)}).ok());
  EXPECT_EQ(p.data, before.data);
  absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(kSgd, {p, g});
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(testing::Compare({out}, *want, kStepTolerance), "");
  // Then in place, with the same compiled class.
  const TensorView pv = ViewOf(p);
  ASSERT_TRUE((**fn)({pv, ViewOf(g)}, {pv}).ok());
  EXPECT_EQ(p.data, out.data);
  EXPECT_EQ((*fn)->stats().compiles, 1);
}

// The fallback's plan with separate memory too: the input stays as it was.
TEST(InPlaceOutputs, SeparateMemoryWithTheCopyFallback) {
  const TraceFn trace = [](std::span<const Value> v) {
    return std::vector<Value>{matmul(v[0], v[1])};
  };
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->JitTraced("product", 2, trace, Donate(0, 0));
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::vector<HostTensor> in = {HostTensor::Random({9, 9}, 4), HostTensor::Random({9, 9}, 5)};
  const HostTensor before = in[0];
  HostTensor out = HostTensor::Filled({9, 9}, 0.0f);
  ASSERT_TRUE((**fn)({ViewOf(in[0]), ViewOf(in[1])}, {ViewOf(out)}).ok());
  EXPECT_EQ(in[0].data, before.data);
  absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(trace, in);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(testing::Compare({out}, *want, ops::OpTolerance(ir::OpKind::kMatMul, 9)), "");
}

// The allocating call writes a declared output over its input and returns a Tensor viewing
// that memory.
TEST(InPlaceOutputs, AllocatingCallReturnsTheInputsMemory) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->JitTraced("sgd", 2, kSgd, Donate(0, 0));
  ASSERT_TRUE(fn.ok()) << fn.status();
  HostTensor p = HostTensor::Random({5, 31}, 1), g = HostTensor::Random({5, 31}, 2);
  absl::StatusOr<std::vector<HostTensor>> want = testing::RunReference(kSgd, {p, g});
  ASSERT_TRUE(want.ok());
  absl::StatusOr<std::vector<Tensor>> out = (**fn)({ViewOf(p), ViewOf(g)});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].data(), p.data.data());
  EXPECT_EQ(std::vector<int64_t>((*out)[0].dims().begin(), (*out)[0].dims().end()), p.shape);
  EXPECT_EQ(testing::Compare({p}, *want, kStepTolerance), "");
}

// A kernel split across threads writes in place as it does on one: bitwise the same result.
TEST(InPlaceOutputs, ThreadsGiveTheSameBits) {
  std::vector<float> results[2];
  for (int threads : {1, 2}) {
    std::unique_ptr<Runtime> rt =
        testing::OpenRuntime({.intra_op_threads = threads, .deterministic = true});
    auto fn = rt->JitTraced("sgd", 2, kSgd, Donate(0, 0));
    ASSERT_TRUE(fn.ok()) << fn.status();
    HostTensor p = HostTensor::Random({256, 300}, 1);
    for (int step = 0; step < 5; ++step) {
      HostTensor g = HostTensor::Random({256, 300}, 50 + step);
      const TensorView pv = ViewOf(p);
      ASSERT_TRUE((**fn)({pv, ViewOf(g)}, {pv}).ok());
    }
    results[threads - 1] = p.data;
  }
  EXPECT_EQ(results[0], results[1]);
}

// Overlap that is not a declared pair over the very same memory is refused as before.
TEST(InPlaceOutputs, UndeclaredOrPartialOverlapIsRefused) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->JitTraced("sgd", 2, kSgd, Donate(0, 0));
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::vector<float> p(4 * 8 + 1, 1.0f), g(4 * 8, 0.5f);
  const TensorView pv = TensorView::Dense(p.data(), {4, 8});
  const TensorView gv = TensorView::Dense(g.data(), {4, 8});
  // Over g: output 0 is declared in place of input 0, not 1.
  absl::Status s = (**fn)({pv, gv}, {gv});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "output 0 overlaps input 1 (pto does not compute in place)");
  // Over p, shifted by one element.
  s = (**fn)({pv, gv}, {TensorView::Dense(p.data() + 1, {4, 8})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "output 0 overlaps input 0 (pto does not compute in place)");
  // The same memory as p passed as both inputs: the output overlaps input 1 too.
  s = (**fn)({pv, pv}, {pv});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "output 0 overlaps input 1 (pto does not compute in place)");
  // Without a declaration, the same memory is refused.
  auto plain = rt->JitTraced("plain", 2, kSgd, {});
  ASSERT_TRUE(plain.ok());
  s = (**plain)({pv, gv}, {pv});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "output 0 overlaps input 0 (pto does not compute in place)");
  EXPECT_EQ(p[0], 1.0f);
}

absl::Status JitWith(std::vector<InPlaceOutput> pairs, std::vector<int> constants = {}) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  FunctionOptions o;
  o.in_place_outputs = std::move(pairs);
  o.constant_inputs = std::move(constants);
  return rt->JitTraced("f", 3, kSgd, o).status();
}

TEST(InPlaceOutputs, DeclarationsAreCheckedAtJit) {
  struct Case {
    std::vector<InPlaceOutput> pairs;
    std::vector<int> constants;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{{.output = -1, .input = 0}}, {}, "in-place output -1 does not exist"},
      {{{.output = 0, .input = 3}}, {}, "in-place output 0: input 3 does not exist (3 inputs)"},
      {{{.output = 0, .input = -2}}, {}, "in-place output 0: input -2 does not exist (3 inputs)"},
      {{{.output = 0, .input = 1}, {.output = 1, .input = 1}},
       {},
       "input 1 is written in place by two outputs (0 and 1)"},
      {{{.output = 1, .input = 0}, {.output = 1, .input = 2}},
       {},
       "output 1 is declared in place twice (over input 0 and input 2)"},
      {{{.output = 0, .input = 2}},
       {2},
       "input 2 is both constant and written in place by output 0"},
  };
  for (const Case& c : cases) {
    absl::Status s = JitWith(c.pairs, c.constants);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.message;
    EXPECT_EQ(s.message(), c.message);
  }
}

TEST(InPlaceOutputs, AnOutputThatDoesNotExistFailsTheFirstCall) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->JitTraced("sgd", 2, kSgd, Donate(1, 0));
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::vector<float> p(8, 1.0f), g(8, 0.5f), out(8);
  absl::Status s = (**fn)({TensorView::Dense(p.data(), {8}), TensorView::Dense(g.data(), {8})},
                          {TensorView::Dense(out.data(), {8})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "in-place output 1 does not exist (the function has 1 output)");
}

// a [r, n] + b [m, n]: the output has a's shape only while m == r.
TEST(InPlaceOutputs, ShapesMustAgreeAtEveryCall) {
  std::unique_ptr<Runtime> rt = testing::OpenRuntime();
  auto fn = rt->Jit(
      "broadcast", [](Value a, Value b) { return a + b; }, Donate(0, 0));
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::vector<float> a(6, 1.0f), b(18, 0.5f);
  const TensorView av = TensorView::Dense(a.data(), {1, 6});
  ASSERT_TRUE((**fn)({av, TensorView::Dense(b.data(), {1, 6})}, {av}).ok());
  EXPECT_EQ(a[5], 1.5f);
  std::vector<float> out(18);
  absl::Status s =
      (**fn)({av, TensorView::Dense(b.data(), {3, 6})}, {TensorView::Dense(out.data(), {3, 6})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "output 0 (shape [3, 6]) cannot be written in place of input 0 (shape [1, 6]): an "
            "in-place output needs its input's shape");
  // The allocating call says the same.
  absl::StatusOr<std::vector<Tensor>> allocated = (**fn)({av, TensorView::Dense(b.data(), {3, 6})});
  EXPECT_EQ(allocated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(allocated.status().message(), s.message());
}

}  // namespace
}  // namespace pto
