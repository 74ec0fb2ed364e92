// pto_bench_warm_start: how fast a fresh process starts from a cache with tuning records,
// against the same cache without them (target: the median warm start with tuning records at
// most 1.2x the one without). See docs/performance.md, "Warm start".
//
//   pto_bench_warm_start [--runs 7] [--tune-budget 40] [--dir DIR] [--reuse] [--pto PATH]
//
// Preparation, with the `pto` program (--pto, default: the one built beside this bench):
//   DIR/plain  `pto demo --cache DIR/plain --record-workload DIR/workload.pbtxt`: the demo's
//              plans and kernels, no tuning records;
//   DIR/tuned  a copy of DIR/plain, then `pto tune --workload DIR/workload.pbtxt --cache
//              DIR/tuned --budget S`: the real tuner leaves its tuning records (and the
//              winners' kernels) in it.
// --reuse keeps both databases when DIR already holds them (to compare builds on the same
// records). The stored records are counted and printed.
//
// Measurement: each run is a fresh child process (this program, exec'd with --child) that
// makes the demo's inputs, then times Runtime::Open, Jit of the demo's block (as `pto demo`
// makes it) and the first call (batch 1, seq 7, pto demo's first) up to its return: the warm
// start. It then calls every other (batch, seq) of pto demo's loop once ("all classes": every
// shape class of the demo loaded). One untimed run per database first warms the page cache;
// then --runs runs per database, alternating. The table gives median / min / max, the kernels
// loaded, the tuning records applied and the search spaces built (tuner::SearchSpacesBuilt)
// by the first call and by all classes.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cache/cache_store.h"
#include "device/device_info.h"
#include "ops/host_tensor.h"
#include "proto/cache.pb.h"
#include "pto/pto.h"
#include "tools/pto/transformer_block.h"
#include "tools/subprocess.h"
#include "tuner/search_space.h"

namespace pto::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr double kTargetRatio = 1.2;

struct Flags {
  int runs = 7;
  double tune_budget = 40;
  std::string dir;
  bool reuse = false;
  std::string pto;
  std::string child_cache;  // --child: run one warm start on this cache and report
};

bool ParseFlags(int argc, char** argv, Flags& f) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reuse") {
      f.reuse = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const std::string value = argv[++i];
    if (arg == "--runs") {
      if (!absl::SimpleAtoi(value, &f.runs) || f.runs < 1) return false;
    } else if (arg == "--tune-budget") {
      if (!absl::SimpleAtod(value, &f.tune_budget) || !(f.tune_budget > 0)) return false;
    } else if (arg == "--dir") {
      f.dir = value;
    } else if (arg == "--pto") {
      f.pto = value;
    } else if (arg == "--child") {
      f.child_cache = value;
    } else {
      return false;
    }
  }
  return true;
}

// --- the child: one warm start ---

// The (batch, seq) pairs of pto demo's loop (tools/pto/demo_command.cc, RunIteration), each
// once, in the order the loop first calls them; the first is the demo's first call.
std::vector<std::pair<int64_t, int64_t>> DemoShapes() {
  static constexpr int64_t kBatches[] = {1, 2, 3, 4, 8};
  static constexpr int64_t kSeqs[] = {7, 16, 32, 50, 64, 100, 128};
  constexpr int kIterations = 60;
  std::vector<std::pair<int64_t, int64_t>> shapes;
  for (int it = 0; it < kIterations; ++it) {
    const std::pair<int64_t, int64_t> bs = {kBatches[(it * 7 / 5) % 5], kSeqs[(it * 3) % 7]};
    if (std::find(shapes.begin(), shapes.end(), bs) == shapes.end()) shapes.push_back(bs);
  }
  return shapes;
}

// What one child reports, after its first call and after all classes.
struct Counts {
  int64_t kernels_loaded = 0, kernels_compiled = 0, records_applied = 0, spaces_built = 0;
};
struct ChildResult {
  double first_call_seconds = 0, all_classes_seconds = 0;  // from before Runtime::Open
  Counts first, all;
};

Counts CountsOf(const FunctionStats& s) {
  return {s.kernels_loaded, s.kernels_compiled, s.tuning_records_applied,
          tuner::SearchSpacesBuilt()};
}

std::string Line(const ChildResult& r) {
  return absl::StrCat(r.first_call_seconds, " ", r.all_classes_seconds, " ", r.first.kernels_loaded,
                      " ", r.first.kernels_compiled, " ", r.first.records_applied, " ",
                      r.first.spaces_built, " ", r.all.kernels_loaded, " ", r.all.kernels_compiled,
                      " ", r.all.records_applied, " ", r.all.spaces_built);
}

bool ParseLine(const std::string& line, ChildResult& r) {
  std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
  return f.size() == 10 && absl::SimpleAtod(f[0], &r.first_call_seconds) &&
         absl::SimpleAtod(f[1], &r.all_classes_seconds) &&
         absl::SimpleAtoi(f[2], &r.first.kernels_loaded) &&
         absl::SimpleAtoi(f[3], &r.first.kernels_compiled) &&
         absl::SimpleAtoi(f[4], &r.first.records_applied) &&
         absl::SimpleAtoi(f[5], &r.first.spaces_built) &&
         absl::SimpleAtoi(f[6], &r.all.kernels_loaded) &&
         absl::SimpleAtoi(f[7], &r.all.kernels_compiled) &&
         absl::SimpleAtoi(f[8], &r.all.records_applied) &&
         absl::SimpleAtoi(f[9], &r.all.spaces_built);
}

// One call input set: x, then the weights; and the output.
struct Operands {
  std::vector<ops::HostTensor> tensors;
  ops::HostTensor out;
  std::vector<TensorView> in_views;
  TensorView out_view;
};

std::vector<Operands> MakeOperands(const tools::BlockDims& dims) {
  std::vector<ops::HostTensor> weights;
  for (const std::vector<int64_t>& shape : tools::WeightShapes(dims)) {
    weights.push_back(ops::HostTensor::Random(shape, 100 + weights.size(), -0.1f, 0.1f));
  }
  std::vector<Operands> all;
  for (const auto& [batch, seq] : DemoShapes()) {
    Operands o;
    o.tensors.push_back(ops::HostTensor::Random({batch, seq, dims.model}, all.size()));
    o.tensors.insert(o.tensors.end(), weights.begin(), weights.end());
    o.out = ops::HostTensor::Filled({batch, seq, dims.model}, 0);
    all.push_back(std::move(o));
  }
  for (Operands& o : all) {  // views once the tensors stay put
    for (const ops::HostTensor& t : o.tensors)
      o.in_views.push_back(TensorView::Dense(t.data.data(), t.shape));
    o.out_view = TensorView::Dense(o.out.data.data(), o.out.shape);
  }
  return all;
}

absl::StatusOr<ChildResult> WarmStart(const std::string& cache) {
  const tools::BlockDims dims;
  std::vector<Operands> operands = MakeOperands(dims);
  const int num_weights = static_cast<int>(tools::WeightShapes(dims).size());
  ChildResult r;
  const Clock::time_point start = Clock::now();
  RuntimeOptions options;  // as pto demo opens it
  options.cache_path = cache;
  options.log_sink = [](LogLevel, std::string_view message) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
  };
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Open(options);
  if (!rt.ok()) return rt.status();
  FunctionOptions fopts;  // as pto demo makes the block
  fopts.dynamic = {{0, 0, Dim("batch", 1, 64)}, {0, 1, Dim("seq", 1, 1024)}};
  for (int i = 1; i <= num_weights; ++i) fopts.constant_inputs.push_back(i);
  absl::StatusOr<std::unique_ptr<Function>> fn =
      (*rt)->JitTraced("transformer_block", 1 + num_weights, tools::TransformerBlock(dims), fopts);
  if (!fn.ok()) return fn.status();
  for (size_t i = 0; i < operands.size(); ++i) {
    if (absl::Status s = (**fn)(operands[i].in_views, {&operands[i].out_view, 1}); !s.ok()) {
      return s;
    }
    if (i == 0) {
      r.first_call_seconds = std::chrono::duration<double>(Clock::now() - start).count();
      r.first = CountsOf((*fn)->stats());
    }
  }
  r.all_classes_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.all = CountsOf((*fn)->stats());
  return r;
}

int ChildMain(const std::string& cache) {
  absl::StatusOr<ChildResult> r = WarmStart(cache);
  if (!r.ok()) {
    std::fprintf(stderr, "warm start on %s: %s\n", cache.c_str(), r.status().ToString().c_str());
    return 1;
  }
  std::printf("%s\n", Line(*r).c_str());
  return 0;
}

// --- the parent: preparation, runs, table ---

// Runs `argv` with stdout and stderr appended to `log`; its exit code, or -1.
int RunProgram(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (std::freopen(log.c_str(), "a", stdout) == nullptr) _exit(127);
    dup2(fileno(stdout), STDERR_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs this program with --child `cache` and reads its result line.
absl::StatusOr<ChildResult> RunChild(const std::string& cache) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(std::strerror(errno));
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDOUT_FILENO);
    close(fds[1]);
    execl("/proc/self/exe", "pto_bench_warm_start", "--child", cache.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buffer[512];
  for (ssize_t n; pid > 0 && (n = read(fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  close(fds[0]);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat("the child on ", cache, " failed"));
  }
  ChildResult r;
  if (!ParseLine(std::string(absl::StripTrailingAsciiWhitespace(out)), r)) {
    return absl::InternalError(absl::StrCat("the child on ", cache, " printed '", out, "'"));
  }
  return r;
}

struct StoredRecords {
  int64_t kernels = 0, plans = 0, tuning = 0, tuning_complete = 0;
};

absl::StatusOr<StoredRecords> CountRecords(const std::string& path) {
  cache::CacheOptions options;
  options.path = path;
  absl::StatusOr<std::unique_ptr<cache::CacheStore>> store =
      cache::OpenPersistentCache(options, cache::UnsafeDirectory::kRefuse);
  if (!store.ok()) return store.status();
  StoredRecords n;
  for (const cache::RecordKind kind :
       {cache::RecordKind::kKernel, cache::RecordKind::kPlan, cache::RecordKind::kTuning}) {
    absl::Status s = (*store)->Scan(kind, [&](const cache::ScannedRecord& r) {
      if (!r.problem.empty()) return;
      if (kind == cache::RecordKind::kKernel) ++n.kernels;
      if (kind == cache::RecordKind::kPlan) ++n.plans;
      if (kind != cache::RecordKind::kTuning) return;
      proto::TuningRecord record;
      if (!record.ParseFromString(r.payload)) return;
      ++n.tuning;
      n.tuning_complete += record.complete() ? 1 : 0;
    });
    if (!s.ok()) return s;
  }
  return n;
}

std::string Describe(const StoredRecords& n) {
  return absl::StrCat(n.kernels, " kernel, ", n.plans, " plan, ", n.tuning, " tuning records (",
                      n.tuning_complete, " complete)");
}

// DIR/plain and DIR/tuned as the header says; false after printing what failed.
bool Prepare(const Flags& flags, const std::string& plain, const std::string& tuned) {
  if (flags.reuse && fs::exists(plain) && fs::exists(tuned)) {
    std::printf("prepare : reusing %s and %s\n", plain.c_str(), tuned.c_str());
    return true;
  }
  fs::remove_all(plain);
  fs::remove_all(tuned);
  const std::string log = flags.dir + "/prepare.log", workload = flags.dir + "/workload.pbtxt";
  std::printf("prepare : pto demo into %s (log: %s) ...\n", plain.c_str(), log.c_str());
  std::fflush(stdout);
  if (RunProgram({flags.pto, "demo", "--cache", plain, "--record-workload", workload}, log) != 0) {
    std::fprintf(stderr, "pto demo failed (see %s)\n", log.c_str());
    return false;
  }
  std::error_code error;
  fs::copy(plain, tuned, fs::copy_options::recursive, error);
  if (error) {
    std::fprintf(stderr, "copying %s: %s\n", plain.c_str(), error.message().c_str());
    return false;
  }
  char budget[32];
  std::snprintf(budget, sizeof budget, "%g", flags.tune_budget);
  std::printf("prepare : pto tune --budget %s into %s ...\n", budget, tuned.c_str());
  std::fflush(stdout);
  // Exit 0: done; the budget may end the run before every kernel is tuned (still 0).
  if (RunProgram({flags.pto, "tune", "--workload", workload, "--cache", tuned, "--budget", budget},
                 log) != 0) {
    std::fprintf(stderr, "pto tune failed (see %s)\n", log.c_str());
    return false;
  }
  return true;
}

struct Summary {
  double median = 0, min = 0, max = 0;
};

Summary Summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

std::string Ms(const Summary& s) {
  char text[64];
  std::snprintf(text, sizeof text, "%7.1f %7.1f %7.1f", s.median * 1e3, s.min * 1e3, s.max * 1e3);
  return text;
}

// "n" when every run agrees, else "min-max".
std::string Agreed(const std::vector<ChildResult>& runs, int64_t (*get)(const ChildResult&)) {
  int64_t lo = get(runs[0]), hi = lo;
  for (const ChildResult& r : runs) {
    lo = std::min(lo, get(r));
    hi = std::max(hi, get(r));
  }
  return lo == hi ? absl::StrCat(lo) : absl::StrCat(lo, "-", hi);
}

void PrintRow(const char* label, const std::vector<ChildResult>& runs) {
  std::vector<double> first, all;
  for (const ChildResult& r : runs) {
    first.push_back(r.first_call_seconds);
    all.push_back(r.all_classes_seconds);
  }
  std::printf("  %-15s %4zu  %s  %s  %6s %6s %6s  %6s %6s %6s\n", label, runs.size(),
              Ms(Summarize(first)).c_str(), Ms(Summarize(all)).c_str(),
              Agreed(runs, [](const ChildResult& r) { return r.first.kernels_loaded; }).c_str(),
              Agreed(runs, [](const ChildResult& r) { return r.first.records_applied; }).c_str(),
              Agreed(runs, [](const ChildResult& r) { return r.first.spaces_built; }).c_str(),
              Agreed(runs, [](const ChildResult& r) { return r.all.kernels_loaded; }).c_str(),
              Agreed(runs, [](const ChildResult& r) { return r.all.records_applied; }).c_str(),
              Agreed(runs, [](const ChildResult& r) { return r.all.spaces_built; }).c_str());
}

void PrintTable(const std::vector<ChildResult>& plain, const std::vector<ChildResult>& tuned) {
  std::printf(
      "\nwarm start in ms (a fresh process, Runtime::Open to the first call's return; \"all "
      "classes\": to the return of the last of the demo's %zu shapes):\n",
      DemoShapes().size());
  std::printf("  %-15s %4s  %-23s  %-23s  %-20s  %-20s\n", "", "", "first call", "all classes",
              "first call", "all classes");
  std::printf("  %-15s %4s  %7s %7s %7s  %7s %7s %7s  %6s %6s %6s  %6s %6s %6s\n", "database",
              "runs", "median", "min", "max", "median", "min", "max", "loaded", "tuning", "spaces",
              "loaded", "tuning", "spaces");
  PrintRow("plans+kernels", plain);
  PrintRow("tuned", tuned);
  std::printf(
      "  (loaded: kernels loaded from the cache; tuning: tuning records applied; spaces: search "
      "spaces built)\n");
  std::vector<double> p, t, pa, ta;
  for (const ChildResult& r : plain) p.push_back(r.first_call_seconds);
  for (const ChildResult& r : tuned) t.push_back(r.first_call_seconds);
  for (const ChildResult& r : plain) pa.push_back(r.all_classes_seconds);
  for (const ChildResult& r : tuned) ta.push_back(r.all_classes_seconds);
  const double ratio = Summarize(t).median / Summarize(p).median;
  std::printf("\nratio tuned / plans+kernels (medians): warm start %.2fx %s, all classes %.2fx\n",
              ratio, ratio <= kTargetRatio ? "(within 1.2x)" : "(ABOVE 1.2x)",
              Summarize(ta).median / Summarize(pa).median);
}

std::string DefaultPto() {
  return (fs::path(tools::ProgramDirectory()).parent_path() / "pto").string();
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) {
    std::fprintf(stderr,
                 "usage: pto_bench_warm_start [--runs 7] [--tune-budget 40] [--dir DIR] "
                 "[--reuse] [--pto PATH]\n");
    return 2;
  }
  if (!flags.child_cache.empty()) return ChildMain(flags.child_cache);
  if (flags.dir.empty()) flags.dir = (fs::temp_directory_path() / "pto_bench_warm_start").string();
  if (flags.pto.empty()) flags.pto = DefaultPto();
  fs::create_directories(flags.dir);
  const device::DeviceInfo device = device::DetectHost();
  std::printf("machine : %s, %s, %d cores usable by this process\n", device.brand.c_str(),
              device::IsaName(device.isa), device.cores);
  const std::string plain = flags.dir + "/plain", tuned = flags.dir + "/tuned";
  if (!Prepare(flags, plain, tuned)) return 1;
  for (const std::string& path : {plain, tuned}) {
    absl::StatusOr<StoredRecords> n = CountRecords(path);
    if (!n.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), n.status().ToString().c_str());
      return 1;
    }
    std::printf("stored  : %-6s %s: %s\n", path == plain ? "plain" : "tuned", path.c_str(),
                Describe(*n).c_str());
  }
  std::fflush(stdout);
  std::vector<ChildResult> results[2];
  for (int run = -1; run < flags.runs; ++run) {  // run -1: untimed, warms the page cache
    for (int db = 0; db < 2; ++db) {
      absl::StatusOr<ChildResult> r = RunChild(db == 0 ? plain : tuned);
      if (!r.ok()) {
        std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
        return 1;
      }
      if (run >= 0) results[db].push_back(*r);
    }
  }
  PrintTable(results[0], results[1]);
  return 0;
}

}  // namespace
}  // namespace pto::bench

int main(int argc, char** argv) { return pto::bench::Main(argc, argv); }
