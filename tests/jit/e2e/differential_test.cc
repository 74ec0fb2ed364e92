// Differential test: random valid programs (tests/jit/e2e/random_program.h) compiled and run by
// a real Runtime, compared with the ops/ reference of the same program traced on the call's
// static shapes, within the error bound each program carries (ops/tolerance.h's per-op bounds
// propagated through it). Each program is called twice, at two sizes of one shape class, so
// symbolic dims are read at run time rather than compiled in.
//
// Every case is a pure function of its seed. A failure prints the seed, the program and the
// command that re-runs it alone.
//
// Modes (flags are read by this file's main, before gtest's):
//   differential_test                      ctest: 120 programs from seed 1 (under a minute on
//                                          two cores)
//   differential_test --cases=N [--first_seed=S]   N programs from seed S (the long mode:
//                                          thousands of programs; docs/architecture.md)
//   differential_test --seed=S             the one program of seed S, its text printed
//   --max_ops=N                            ops drawn per program (default 8)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "tests/jit/e2e/random_program.h"
#include "tests/jit/e2e/test_util.h"

namespace pto {
namespace {

// The one place that says how the differential test's Runtime is configured. Checked kernels:
// a kernel that reads or writes outside a buffer aborts naming it, instead of a wrong result
// or none.
RuntimeOptions DifferentialRuntimeOptions() {
  RuntimeOptions options;
  options.checked_kernels = true;
  return options;
}

struct DifferentialFlags {
  uint64_t first_seed = 1;
  int64_t cases = 120;
  bool one_seed = false;  // --seed: run first_seed alone and print its program
  int max_ops = 8;
};

// Programs per Runtime: a long run opens a fresh one now and then, so the kernels of finished
// programs do not pile up.
constexpr int64_t kProgramsPerRuntime = 250;
constexpr int kMaxReportedFailures = 20;

// Runs program `p` on `fn`, both calls; empty when every output matches the reference.
std::string CheckProgram(Function& fn, const testing::RandomProgram& p) {
  const TraceFn trace = p.trace();
  const std::vector<ops::Tolerance> tolerances = p.Tolerances();
  for (int call = 0; call < p.num_calls(); ++call) {
    const std::vector<ops::HostTensor> inputs = p.Inputs(call);
    absl::StatusOr<std::vector<ops::HostTensor>> want = testing::RunReference(trace, inputs);
    absl::StatusOr<std::vector<ops::HostTensor>> got = testing::RunPto(fn, inputs);
    if (!want.ok() || !got.ok()) {
      return absl::StrCat("call ", call + 1, ": pto: ", got.status().ToString(),
                          "; reference: ", want.status().ToString());
    }
    if (got->size() != want->size()) {
      return absl::StrCat("call ", call + 1, ": ", got->size(), " outputs, expected ",
                          want->size());
    }
    for (size_t o = 0; o < want->size(); ++o) {
      std::string mismatch;
      if (!ops::AllClose((*got)[o], (*want)[o], tolerances[o], &mismatch)) {
        return absl::StrCat("call ", call + 1, ", output ", o, ": ", mismatch);
      }
    }
  }
  return "";
}

void RunPrograms(const DifferentialFlags& flags, const std::string& program_name) {
  testing::RandomProgramOptions options;
  options.max_ops = flags.max_ops;
  std::unique_ptr<Runtime> rt;
  int failures = 0;
  int64_t calls = 0, ops = 0;
  std::map<std::string, int64_t> kinds;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < flags.cases; ++i) {
    if (i % kProgramsPerRuntime == 0) {
      rt = testing::OpenRuntime(DifferentialRuntimeOptions());
      ASSERT_NE(rt, nullptr);
    }
    const uint64_t seed = flags.first_seed + static_cast<uint64_t>(i);
    const testing::RandomProgram p = testing::RandomProgram::Generate(seed, options);
    if (flags.one_seed) std::printf("%s", p.ToString().c_str());
    for (ir::OpKind k : p.op_kinds()) ++kinds[ir::OpName(k)];
    ops += p.num_ops();
    absl::StatusOr<std::unique_ptr<Function>> fn = rt->JitTraced(
        absl::StrCat("program_", seed), p.num_inputs(), p.trace(), p.function_options());
    std::string failure = fn.ok() ? CheckProgram(**fn, p) : fn.status().ToString();
    for (const std::string& problem : p.problems()) {
      absl::StrAppend(&failure, failure.empty() ? "" : "; ", "shape rules: ", problem);
    }
    calls += p.num_calls();
    if (failure.empty()) continue;
    ++failures;
    ADD_FAILURE() << "program of seed " << seed << " differs from the reference: " << failure
                  << "\nre-run alone: " << program_name << " --seed=" << seed << "\n"
                  << p.ToString();
    if (failures >= kMaxReportedFailures) {
      ADD_FAILURE() << "stopping after " << failures << " failures";
      break;
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string coverage;
  for (const auto& [kind, count] : kinds) absl::StrAppend(&coverage, " ", kind, "=", count);
  std::printf(
      "[ differential ] %lld programs from seed %llu, %lld calls, %lld ops, %d failed, "
      "%.1f s\n[ ops          ]%s\n",
      static_cast<long long>(flags.cases), static_cast<unsigned long long>(flags.first_seed),
      static_cast<long long>(calls), static_cast<long long>(ops), failures, seconds,
      coverage.c_str());
}

// Removes this file's flags from argv; false (with a message) for a malformed one.
bool ParseFlags(int* argc, char** argv, DifferentialFlags* flags) {
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&](std::string_view name) -> std::optional<std::string_view> {
      if (arg.substr(0, name.size()) != name) return std::nullopt;
      return arg.substr(name.size());
    };
    bool ok = true;
    if (auto v = value("--cases=")) {
      ok = absl::SimpleAtoi(absl::string_view(v->data(), v->size()), &flags->cases) &&
           flags->cases > 0;
    } else if (auto v = value("--first_seed=")) {
      ok = absl::SimpleAtoi(absl::string_view(v->data(), v->size()), &flags->first_seed);
    } else if (auto v = value("--seed=")) {
      ok = absl::SimpleAtoi(absl::string_view(v->data(), v->size()), &flags->first_seed);
      flags->cases = 1;
      flags->one_seed = true;
    } else if (auto v = value("--max_ops=")) {
      ok = absl::SimpleAtoi(absl::string_view(v->data(), v->size()), &flags->max_ops) &&
           flags->max_ops > 0;
    } else {
      argv[out++] = argv[i];
      continue;
    }
    if (!ok) {
      std::fprintf(stderr, "differential_test: bad flag %s\n", argv[i]);
      return false;
    }
  }
  *argc = out;
  return true;
}

}  // namespace
}  // namespace pto

int main(int argc, char** argv) {
  pto::DifferentialFlags flags;
  if (!pto::ParseFlags(&argc, argv, &flags)) return 2;
  ::testing::InitGoogleTest(&argc, argv);
  const std::string program = argv[0];
  ::testing::RegisterTest("Differential", "RandomProgramsMatchTheReference", nullptr, nullptr,
                          __FILE__, __LINE__, [flags, program]() -> ::testing::Test* {
                            class Case : public ::testing::Test {
                             public:
                              Case(pto::DifferentialFlags f, std::string p)
                                  : flags_(f), program_(std::move(p)) {}
                              void TestBody() override { pto::RunPrograms(flags_, program_); }

                             private:
                              pto::DifferentialFlags flags_;
                              std::string program_;
                            };
                            return new Case(flags, program);
                          });
  return RUN_ALL_TESTS();
}
