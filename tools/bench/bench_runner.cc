#include "tools/bench/bench_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tools/bench/buffers.h"
#include "tools/bench/onnx_runtime_baseline.h"
#include "tools/bench/pto_runner.h"
#include "tools/bench/roofline.h"
#include "tools/subprocess.h"

namespace pto::bench {
namespace {

// Bursts of the case's limit before its timing and again after it.
constexpr int kLimitBursts = 5;

const char* const kColumnNames[kNumColumns] = {"oneDNN", "oneDNN post-ops", "OpenBLAS", "LIBXSMM",
                                               "ONNX Runtime"};

// max |got - want| / max |want| over every output.
double MaxRelativeError(const std::vector<std::vector<float>>& got,
                        const std::vector<std::vector<float>>& want) {
  double diff = 0, scale = 0;
  for (size_t o = 0; o < want.size(); ++o) {
    for (size_t i = 0; i < want[o].size(); ++i) {
      const double d = std::fabs(static_cast<double>(got[o][i]) - want[o][i]);
      diff = std::isnan(d) ? INFINITY : std::max(diff, d);
      scale = std::max(scale, std::fabs(static_cast<double>(want[o][i])));
    }
  }
  return scale > 0 ? diff / scale : diff;
}

// The row's case's rate at `seconds` per call: GB/s for a memory-bound case, else GFLOP/s.
double Rate(const Row& row, double seconds) {
  return (row.memory_bound ? row.bytes : row.flops) / seconds * 1e-9;
}

// The case's fields a row repeats.
Row RowFor(const CaseSpec& spec) {
  Row row;
  row.group = spec.group;
  row.name = spec.name;
  row.memory_bound = spec.memory_bound;
  row.target = spec.target;
  row.report_memory = spec.report_memory;
  row.flops = spec.flops;
  row.bytes = spec.bytes;
  return row;
}

struct Backend {
  int column;                           // a Column, or -1 for pto
  Prepared prepared;                    // in this process (child is null)
  std::unique_ptr<tools::Child> child;  // or a pto_bench_baseline process
  int child_calls = 0;                  // its calls per repetition
};

// Reads a baseline process's first answer: READY keeps it (its calls per repetition and
// intermediate bytes set); MISSING and NONE note the column; anything else is also a failure.
// The INFO lines it prints before go to the row's notes, DETAIL lines to stderr, OWN (seconds
// per call) to the row's onnx_runtime_own as a rate.
std::unique_ptr<tools::Child> AwaitReady(std::unique_ptr<tools::Child> child, int c, int& calls,
                                         int64_t& intermediate_bytes, Row& row) {
  std::string line;
  while (child != nullptr && child->ReadLine(line)) {
    if (line.rfind("INFO ", 0) == 0) {
      row.notes.push_back(std::string(kColumnNames[c]) + ": " + line.substr(5));
    } else if (line.rfind("DETAIL ", 0) == 0) {  // diagnostics: beside the progress lines
      std::fprintf(stderr, "  %s: %s\n", kColumnNames[c], line.c_str() + 7);
    } else if (line.rfind("OWN ", 0) == 0) {  // ONNX Runtime's own seconds per call
      const double seconds = std::atof(line.c_str() + 4);
      if (seconds > 0) row.onnx_runtime_own = Rate(row, seconds);
    } else {
      break;
    }
  }
  if (child != nullptr && line.rfind("READY ", 0) == 0) {
    long long bytes = -1;
    if (std::sscanf(line.c_str(), "READY %d %lld", &calls, &bytes) == 2 && calls >= 1) {
      intermediate_bytes = bytes;
      tools::WaitForQuiet({child.get()});
      return child;
    }
  }
  const bool missing = line.rfind("MISSING", 0) == 0;
  const bool none = line.rfind("NONE", 0) == 0;  // no such operation: not a failure
  row.baseline_note[c] = missing ? "missing" : none ? "-" : "error";
  if (missing) row.notes.push_back(std::string(kColumnNames[c]) + " missing: " + line.substr(8));
  if (!missing && !none) {
    const std::string said = child != nullptr ? (child->Finish(), child->output()) : "";
    row.failures.push_back(std::string(kColumnNames[c]) +
                           " process failed: " + (said.empty() ? "it did not start" : said));
  }
  return nullptr;
}

// Starts pto_bench_baseline for column `c` of the case (AwaitReady).
std::unique_ptr<tools::Child> StartBaselineChild(const CaseSpec& spec, int c,
                                                 const RunOptions& options, int& calls,
                                                 int64_t& intermediate_bytes, Row& row) {
  char flags[256];
  std::snprintf(flags, sizeof flags,
                " --column %d --threads %d --rotate-bytes %lld --max-copies %d "
                "--warmup-seconds %g --min-rep-seconds %g",
                c, options.threads, static_cast<long long>(options.rotate_bytes),
                options.max_copies, options.timing.warmup_seconds, options.timing.min_rep_seconds);
  return AwaitReady(
      tools::Child::Start(options.baseline_command + " --case '" + spec.name + "'" + flags), c,
      calls, intermediate_bytes, row);
}

// Starts ONNX Runtime on the case's graph (onnx_runtime_baseline.h; AwaitReady).
std::unique_ptr<tools::Child> StartOnnxRuntimeChild(const CaseSpec& spec, const RunOptions& options,
                                                    const OperandSets& operands, int& calls,
                                                    int64_t& intermediate_bytes, Row& row) {
  const int c = static_cast<int>(Column::kOnnxRuntime);
  absl::StatusOr<OnnxRuntimeProcess> process =
      StartOnnxRuntime(spec, operands, static_cast<int>(operands.sets().size()), options.threads,
                       options.timing, options.onnx_runtime);
  if (!process.ok()) {
    const bool missing = process.status().code() == absl::StatusCode::kUnavailable;
    row.baseline_note[c] = missing ? "missing" : "error";
    const std::string message(process.status().message());
    if (missing) {
      row.notes.push_back(std::string(kColumnNames[c]) + " missing: " + message);
    } else {
      row.failures.push_back(std::string(kColumnNames[c]) + " set-up failed: " + message);
    }
    return nullptr;
  }
  std::string exported = process->exported;
  if (exported.rfind("EXPORTED ", 0) == 0) exported = exported.substr(9);
  row.notes.push_back(std::string(kColumnNames[c]) + ": " + spec.onnx.graph +
                      " exported by tools/bench/onnx_export.py with " + exported);
  std::unique_ptr<tools::Child> child =
      AwaitReady(std::move(process->child), c, calls, intermediate_bytes, row);
  std::error_code ignored;  // it has read its model and inputs
  std::filesystem::remove_all(process->directory, ignored);
  return child;
}

// Copy 0's outputs of a baseline process (a call on zeroed outputs), read back through a file.
std::vector<std::vector<float>> ChildOutputs(tools::Child& child, const CaseSpec& spec) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("pto_bench_outputs_" + std::to_string(::getpid()) + ".bin");
  std::vector<std::vector<float>> outputs;
  std::string line;
  if (!child.WriteLine("output " + path) || !child.ReadUntil("OUTPUT", line)) return outputs;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  for (const std::vector<int64_t>& shape : spec.outputs) {
    outputs.emplace_back(Elements(shape));
    if (f == nullptr || std::fread(outputs.back().data(), sizeof(float), outputs.back().size(),
                                   f) != outputs.back().size()) {
      outputs.back().assign(outputs.back().size(), NAN);
    }
  }
  if (f != nullptr) std::fclose(f);
  std::filesystem::remove(path);
  return outputs;
}

// Each baseline the case has, then pto, set up on the operands; a set-up that fails is noted in
// the row (a missing library is not a failure).
std::vector<Backend> PrepareBackends(const CaseSpec& spec, Runtime& runtime,
                                     const RunOptions& options, const OperandSets& operands,
                                     Row& row) {
  std::vector<Backend> backends;
  for (int c = 0; c < kNumColumns; ++c) {
    if (c == static_cast<int>(Column::kOnnxRuntime)) {
      if (spec.onnx.graph.empty()) {
        row.baseline_note[c] = "-";
        continue;
      }
      Backend backend{c, {}, nullptr, 0};
      backend.child = StartOnnxRuntimeChild(spec, options, operands, backend.child_calls,
                                            backend.prepared.intermediate_bytes, row);
      if (backend.child != nullptr) backends.push_back(std::move(backend));
      continue;
    }
    if (!spec.baselines[c]) {
      row.baseline_note[c] = "-";
      continue;
    }
    if (!options.baseline_command.empty()) {
      Backend backend{c, {}, nullptr, 0};
      backend.child = StartBaselineChild(spec, c, options, backend.child_calls,
                                         backend.prepared.intermediate_bytes, row);
      if (backend.child != nullptr) backends.push_back(std::move(backend));
      continue;
    }
    absl::StatusOr<Prepared> prepared = spec.baselines[c](operands.sets(), options.threads);
    if (!prepared.ok()) {
      const bool missing = prepared.status().code() == absl::StatusCode::kUnavailable;
      const bool none = prepared.status().code() == absl::StatusCode::kUnimplemented;
      row.baseline_note[c] = missing ? "missing" : none ? "-" : "error";
      if (!missing && !none) {
        row.failures.push_back(std::string(kColumnNames[c]) +
                               " set-up failed: " + std::string(prepared.status().message()));
      }
      continue;
    }
    backends.push_back({c, *std::move(prepared), nullptr, 0});
  }
  absl::StatusOr<Prepared> pto = PreparePto(runtime, spec, operands.sets());
  if (pto.ok()) {
    backends.push_back({-1, *std::move(pto), nullptr, 0});
  } else {
    row.failures.push_back("pto failed: " + std::string(pto.status().message()));
  }
  return backends;
}

// One burst of the case's limit: peak FMA GFLOP/s for a compute-bound case, bandwidth GB/s for a
// memory-bound one; empty when the options give no device or bandwidth burst for it.
std::function<double()> LimitBurst(const CaseSpec& spec, const RunOptions& options) {
  if (options.device != nullptr && !spec.memory_bound) {
    return [&options] {
      return PeakBurstGflops(*options.device, options.threads, kPeakBurstIterations);
    };
  }
  if (options.bandwidth != nullptr && spec.memory_bound) {
    return [&options] { return options.bandwidth->Gbs(options.threads); };
  }
  return nullptr;
}

// The backends in this process interleaved with one rotation of the operand sets (as
// TimeInterleaved); a baseline process rotates its own copies and is asked for each repetition,
// and after it the next waits until its threads stop spinning (tools::WaitForQuiet).
std::vector<Timing> TimeBackendsOnce(const std::vector<Backend>& backends,
                                     const RunOptions& options, int num_sets) {
  int set = 0;
  std::vector<Contender> contenders;
  // With baseline processes, every repetition ends waiting for quiet: theirs spin after their
  // work, and so do this process's oneTBB workers after pto's.
  const bool processes = std::any_of(backends.begin(), backends.end(),
                                     [](const Backend& b) { return b.child != nullptr; });
  for (const Backend& backend : backends) {
    tools::Child* child = backend.child.get();
    if (child == nullptr) {
      const Prepared& prepared = backend.prepared;
      contenders.push_back(CallsContender(
          [&prepared, &set, num_sets] {
            prepared.run(set);
            set = (set + 1) % num_sets;
          },
          options.timing, processes ? [] { tools::WaitForQuiet({}); } : std::function<void()>()));
      continue;
    }
    const int calls = backend.child_calls;
    contenders.push_back({[calls] { return calls; },
                          [child](bool /*before_others*/) {
                            std::string line;
                            double seconds = NAN;
                            if (child->WriteLine("rep") && child->ReadUntil("REP ", line)) {
                              seconds = std::atof(line.c_str() + 4);
                            }
                            tools::WaitForQuiet({child});
                            return seconds;
                          }});
  }
  return TimeContenders(contenders, options.timing);
}

// Times the backends side by side (TimeBackendsOnce): on a shared machine whose speed drifts by
// more than the differences measured, the ratios then compare the same stretch of time. Sets
// the row's case_limit.
std::vector<Timing> TimeBackends(const std::vector<Backend>& backends, const CaseSpec& spec,
                                 const RunOptions& options, int num_sets, Row& row) {
  // The limits drift as much as the backends do (a run's peak before and after its cases: 189
  // and 283 GFLOP/s; its bandwidth 24.4 and 30.3 GB/s), so a case's share of its limit is also
  // taken against bursts right before and after its timing. Not in its rounds: bursts there
  // slowed pto's short calls (256^3 fell to 0.67x oneDNN in 2 of 4 runs, 1.01-1.09x without).
  const std::function<double()> burst = LimitBurst(spec, options);
  std::vector<double> limits;
  auto measure_limits = [&] {
    for (int i = 0; burst && i < kLimitBursts; ++i) limits.push_back(burst());
  };
  measure_limits();
  const std::vector<Timing> timings = TimeBackendsOnce(backends, options, num_sets);
  measure_limits();
  if (!limits.empty()) {
    std::sort(limits.begin(), limits.end());
    row.case_limit = limits[limits.size() / 2];
  }
  return timings;
}

// The first baseline's outputs, which the others and pto are compared with.
struct Reference {
  std::vector<std::vector<float>> outputs;  // empty: no baseline ran before
  std::string name;
};

void RecordPto(const RunOptions& options, const Timing& timing, int64_t intermediate_bytes,
               const std::vector<std::vector<float>>& outputs, const Reference& reference,
               Row& row) {
  row.pto = Rate(row, timing.median);
  if (row.case_limit > 0) row.case_limit_share = row.pto / row.case_limit;
  row.pto_spread = timing.spread();
  row.pto_seconds = timing.median;
  row.pto_intermediate_bytes = intermediate_bytes;
  if (reference.outputs.empty()) return;
  row.max_rel_error = MaxRelativeError(outputs, reference.outputs);
  row.error_failed = !(row.max_rel_error <= options.tolerance);
  if (row.error_failed) {
    char text[160];
    std::snprintf(text, sizeof text, "pto output differs from %s: max rel err %.2e > %.0e",
                  reference.name.c_str(), row.max_rel_error, options.tolerance);
    row.failures.push_back(text);
  }
}

// `best_rate`: the fastest baseline so far, whose spread the row reports.
void RecordBaseline(int c, const RunOptions& options, const Timing& timing,
                    int64_t intermediate_bytes, std::vector<std::vector<float>> outputs,
                    Reference& reference, double& best_rate, Row& row) {
  row.baseline[c] = Rate(row, timing.median);
  if (c == static_cast<int>(Column::kOnednn)) row.baseline_intermediate_bytes = intermediate_bytes;
  if (c == static_cast<int>(Column::kOnednnFused)) {
    row.fused_intermediate_bytes = intermediate_bytes;
  }
  if (row.baseline[c] > best_rate) {
    best_rate = row.baseline[c];
    row.baseline_spread = timing.spread();
  }
  if (reference.outputs.empty()) {
    reference.outputs = std::move(outputs);
    reference.name = kColumnNames[c];
  } else if (const double e = MaxRelativeError(outputs, reference.outputs);
             !(e <= options.tolerance)) {
    char text[160];
    std::snprintf(text, sizeof text, "baselines disagree: %s vs %s max rel err %.2e",
                  kColumnNames[c], reference.name.c_str(), e);
    row.failures.push_back(text);
  }
}

}  // namespace

Row RunCase(const CaseSpec& spec, Runtime& runtime, const RunOptions& options) {
  Row row = RowFor(spec);
  OperandSets operands(spec, CopiesFor(spec, options.rotate_bytes, options.max_copies));
  // Every backend is set up first, then all are timed side by side.
  std::vector<Backend> backends = PrepareBackends(spec, runtime, options, operands, row);
  const std::vector<Timing> timings =
      TimeBackends(backends, spec, options, static_cast<int>(operands.sets().size()), row);
  // Then each one's output is taken and compared with the first baseline's.
  Reference reference;
  double best_rate = -1;
  for (size_t i = 0; i < backends.size(); ++i) {
    const Backend& backend = backends[i];
    std::vector<std::vector<float>> outputs = backend.child != nullptr
                                                  ? ChildOutputs(*backend.child, spec)
                                                  : operands.OutputsOf(backend.prepared.run);
    const int64_t bytes = backend.prepared.intermediate_bytes;
    if (backend.column < 0) {
      RecordPto(options, timings[i], bytes, outputs, reference, row);
    } else {
      RecordBaseline(backend.column, options, timings[i], bytes, std::move(outputs), reference,
                     best_rate, row);
    }
  }
  return row;
}

}  // namespace pto::bench
