// pto_bench_kernels: pto's kernels beside oneDNN and OpenBLAS on the same inputs, per thread
// count, with the machine's measured roofline. See docs/performance.md.
//
//   pto_bench_kernels [--quick] [--filter SUBSTR] [--reps N] [--threads 2,1] [--budget SECONDS]
//                     [--tune-trials N [--tune-seconds S]] [--in-process-baselines]
//                     [--onnxruntime-node DIR]
//   pto_bench_kernels --sweep [--sweep-shape MxKxN] [--sweep-transposed-a] [--sweep-transposed-b]
//   [--sweep-limit N]
//                     [--sweep-csv FILE] [--sweep-configs "mr=12,nr_vectors=2;kc=512"]
//                     [--sweep-constant-b] [--sweep-sets N]
//   pto_bench_kernels --dump-asm [--quick] [--filter SUBSTR] [--threads T]
//
// --tune-trials N (default 0: off) opens pto's Runtime with blocking tuning (N trials and at
// most --tune-seconds, default 30, per kernel): each case's first call, made before its timing,
// tunes its kernels, so the pto column shows tuned kernels beside baselines measured in the same
// run; the tuner's own figures per kernel are printed under each table.
//
// --dump-asm prints pto's assembly for each case instead of timing anything (asm_dump.h).
//
// Baselines: each oneDNN and OpenBLAS baseline of a case runs in a process of its own
// (pto_bench_baseline, baseline_child.cc) with its library's default threading, on the same
// operands and rotation sizes, and takes turns with pto repetition by repetition; after each of
// its repetitions the bench waits until its threads stop spinning, so they do not take a core
// from pto's next one. --in-process-baselines runs them in this process instead, interleaved
// with pto, with the settings below.
//
// OMP_WAIT_POLICY: in this process, oneDNN's OpenMP pool must not spin on a core pto is using.
// libgomp reads the variable when it is loaded, before main, so main sets
// OMP_WAIT_POLICY=passive and re-runs the program once (execv of /proc/self/exe) when it was not
// set; a value set by the caller is kept (and passed to the baseline processes). OPENBLAS_CORETYPE
// likewise (OpenBLAS picks its kernels when it is loaded): when it fell back to its generic kernels
// on a CPU it does not know, main sets the core type that matches the CPU's vector ISA
// (OpenblasCoreOverride) and re-runs, so the baseline is not a straw man. OPENBLAS_THREAD_TIMEOUT=4
// likewise: OpenBLAS's threads wait 2^4 cycles, not 2^28, before they sleep, so they do not spin on
// the cores of the backend timed after them (RunCase takes turns).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "device/device_info.h"
#include "pto/pto.h"
#include "tools/bench/asm_dump.h"
#include "tools/bench/baselines_libxsmm.h"
#include "tools/bench/baselines_onednn.h"
#include "tools/bench/baselines_openblas.h"
#include "tools/bench/bench_runner.h"
#include "tools/bench/bench_shapes.h"
#include "tools/bench/config_sweep.h"
#include "tools/bench/pto_runner.h"
#include "tools/bench/reference_figures.h"
#include "tools/bench/roofline.h"
#include "tools/bench/table.h"
#include "tools/bench/targets.h"
#include "tools/subprocess.h"

namespace pto::bench {
namespace {

// Which of OMP_WAIT_POLICY and OPENBLAS_THREAD_TIMEOUT main set itself (before re-running),
// comma-separated: the baseline processes run without them.
constexpr char kSetByBench[] = "PTO_BENCH_SET_ENV";

// The least time of a repetition when the baselines run in processes of their own.
constexpr double kProcessRepSeconds = 0.02;
// And of the warm-up each backend calibrates its repetitions on.
constexpr double kProcessWarmupSeconds = 0.3;

// The bandwidth copy's buffers (PrintLimits says 256 MiB): beyond any real L3 share.
constexpr int64_t kLimitBufferBytes = int64_t{256} << 20;

struct Flags {
  bool quick = false;
  std::string filter;
  // Short cases run up to 31 rounds: on this shared machine a tenant's burst can cover half of
  // a backend's 15 repetitions (pto's 256^3 at 0.61x oneDNN with a 52% spread in one run,
  // 1.03x in the run before), and the median of more rounds over a longer stretch resists it.
  int reps = 31;
  double budget = 1.0;
  std::vector<int> threads = {2, 1};
  bool sweep = false;
  bool dump_asm = false;
  SweepOptions sweep_options;
  PtoTuning tuning;
  // The baselines in this process, interleaved with pto (OpenMP's passive wait policy), instead
  // of each in a process of its own with its defaults (pto_bench_baseline).
  bool in_process_baselines = false;
  // The onnxruntime-node package for the ONNX Runtime column (empty: where CMake put it).
  std::string onnxruntime_node;
};

bool ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--quick") {
      flags.quick = true;
    } else if (arg == "--filter") {
      flags.filter = value();
    } else if (arg == "--reps") {
      if (!absl::SimpleAtoi(value(), &flags.reps) || flags.reps < 1) return false;
    } else if (arg == "--budget") {
      if (!absl::SimpleAtod(value(), &flags.budget) || flags.budget <= 0) return false;
    } else if (arg == "--threads") {
      flags.threads.clear();
      for (absl::string_view t : absl::StrSplit(value(), ',')) {
        int n = 0;
        if (!absl::SimpleAtoi(t, &n) || n < 1) return false;
        flags.threads.push_back(n);
      }
    } else if (arg == "--tune-trials") {
      if (!absl::SimpleAtoi(value(), &flags.tuning.trials_per_kernel) ||
          flags.tuning.trials_per_kernel < 0) {
        return false;
      }
    } else if (arg == "--tune-seconds") {
      if (!absl::SimpleAtod(value(), &flags.tuning.seconds_per_kernel) ||
          !(flags.tuning.seconds_per_kernel >= 0)) {
        return false;
      }
    } else if (arg == "--dump-asm") {
      flags.dump_asm = true;
    } else if (arg == "--in-process-baselines") {
      flags.in_process_baselines = true;
    } else if (arg == "--onnxruntime-node") {
      flags.onnxruntime_node = value();
      if (flags.onnxruntime_node.empty()) return false;
    } else if (arg == "--sweep") {
      flags.sweep = true;
    } else if (arg == "--sweep-shape") {
      std::vector<std::string> dims = absl::StrSplit(value(), 'x');
      SweepOptions& s = flags.sweep_options;
      if (dims.size() != 3 || !absl::SimpleAtoi(dims[0], &s.m) ||
          !absl::SimpleAtoi(dims[1], &s.k) || !absl::SimpleAtoi(dims[2], &s.n) || s.m < 1 ||
          s.k < 1 || s.n < 1) {
        return false;
      }
    } else if (arg == "--sweep-transposed-a") {
      flags.sweep_options.transposed_a = true;
    } else if (arg == "--sweep-transposed-b") {
      flags.sweep_options.transposed_b = true;
    } else if (arg == "--sweep-limit") {
      if (!absl::SimpleAtoi(value(), &flags.sweep_options.limit)) return false;
    } else if (arg == "--sweep-constant-b") {
      flags.sweep_options.constant_b = true;
    } else if (arg == "--sweep-configs") {
      flags.sweep_options.configs = value();
    } else if (arg == "--sweep-csv") {
      flags.sweep_options.csv_path = value();
    } else if (arg == "--sweep-sets") {
      if (!absl::SimpleAtoi(value(), &flags.sweep_options.sets) || flags.sweep_options.sets < 0 ||
          flags.sweep_options.sets > 4096) {
        return false;
      }
    } else {
      return false;
    }
  }
  return true;
}

void PrintMachine(const device::DeviceInfo& d, bool in_process_baselines) {
  std::printf(
      "machine  : %s (%s, family %d model %d), %s, %d-bit vectors, FMA %s, %d cores usable\n",
      d.brand.c_str(), d.cpu_name.c_str(), d.family, d.model, device::IsaName(d.isa), d.vector_bits,
      d.has_fma ? "yes" : "no", d.cores);
  std::printf("caches   : L1d %lld KiB, L2 %lld KiB, L3 %lld MiB (as reported)\n",
              static_cast<long long>(d.l1d_bytes >> 10), static_cast<long long>(d.l2_bytes >> 10),
              static_cast<long long>(d.l3_bytes >> 20));
  if (d.cores >= 2) std::printf("handoff  : %s\n", HandoffSummary().c_str());
  std::printf("reference: DESIGN.md's figures are from %s; ", kReferenceMachine);
  if (d.isa == device::Isa::kAvx512) {
    std::printf("this machine has AVX-512 too.\n");
  } else {
    std::printf(
        "this machine is %s, so baselines are flagged against them anyway: the flags "
        "below say how far off, not that the bench is broken.\n",
        device::IsaName(d.isa));
  }
  std::printf("baselines: %s\n           %s\n           %s (small matmuls, at 1 thread)\n",
              OnednnDescription().c_str(), OpenblasDescription().c_str(),
              LibxsmmDescription().c_str());
  const char* wait = std::getenv("OMP_WAIT_POLICY");
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  const char* timeout = std::getenv("OPENBLAS_THREAD_TIMEOUT");
  std::printf("env      : OMP_WAIT_POLICY=%s OPENBLAS_CORETYPE=%s OPENBLAS_THREAD_TIMEOUT=%s\n",
              wait ? wait : "(unset)", core ? core : "(unset)", timeout ? timeout : "(unset)");
  if (!in_process_baselines) {
    const char* set = std::getenv(kSetByBench);
    std::printf(
        "           (this process's; each baseline runs in a process of its own "
        "(pto_bench_baseline) without %s)\n",
        set != nullptr && *set != 0
            ? absl::StrJoin(absl::StrSplit(set, ',', absl::SkipEmpty()), " ").c_str()
            : "changes to these");
  }
}

void PrintLimits(const MachineLimits& l) {
  std::printf(
      "\nmeasured at %d thread%s: fp32 peak %.1f GFLOP/s, bandwidth %.1f GB/s "
      "(read+write, 256 MiB buffers, streaming stores; %.1f with ordinary stores)",
      l.threads, l.threads == 1 ? "" : "s", l.peak_gflops, l.bandwidth_gbs,
      l.bandwidth_ordinary_stores_gbs);
  if (l.threads == kReferenceThreads) {
    const std::string peak_flag = ReferenceFlag(l.peak_gflops, kReferencePeakGflops);
    const std::string bw_flag = ReferenceFlag(l.bandwidth_gbs, kReferenceBandwidthGbs);
    std::printf(
        "\n  reference (DESIGN.md, 2 threads): peak %.0f GFLOP/s%s%s, bandwidth %.0f GB/s%s%s",
        kReferencePeakGflops, peak_flag.empty() ? "" : "  FLAG ", peak_flag.c_str(),
        kReferenceBandwidthGbs, bw_flag.empty() ? "" : "  FLAG ", bw_flag.c_str());
  }
  std::printf("\n");
}

void PrintReferenceCheck(const std::vector<Row>& rows) {
  std::printf(
      "\nbaselines beside DESIGN.md's reference figures (2 threads, flagged beyond 15%%):\n");
  for (const ReferenceFigure& f : ReferenceFigures()) {
    const int column = f.baseline == "OpenBLAS" ? 2 : 0;
    double measured = -1;
    for (const Row& r : rows) {
      if (r.name == f.case_name) measured = r.baseline[column];
    }
    if (measured < 0) {
      std::printf("  %-8s %-24s ref %5.0f  measured -  (not run)\n", f.baseline.c_str(),
                  f.case_name.c_str(), f.gflops);
      continue;
    }
    const std::string flag = ReferenceFlag(measured, f.gflops);
    std::printf("  %-8s %-24s ref %5.0f  measured %7.1f GFLOP/s  %s%s\n", f.baseline.c_str(),
                f.case_name.c_str(), f.gflops, measured, flag.empty() ? "ok" : "FLAG ",
                flag.c_str());
  }
}

// What the pto column shows when pto's kernels are tuned.
std::string TunedPtoColumn(const PtoTuning& tuning) {
  return absl::StrFormat(
      "tuned (%d trials per kernel, at most %g s each: blocking tuning at each case's first "
      "call, before its timing)",
      tuning.trials_per_kernel, tuning.seconds_per_kernel);
}

// The command prefix of the baseline processes: pto_bench_baseline beside this program, with
// the variables this program set for its own process (kSetByBench) unset again, so that OpenMP
// and OpenBLAS run with their defaults there; OPENBLAS_CORETYPE stays (it picks OpenBLAS's
// kernels for this CPU, as its users on it must).
std::string BaselineCommand() {
  std::string command = "env";
  if (const char* set = std::getenv(kSetByBench); set != nullptr) {
    for (absl::string_view name : absl::StrSplit(set, ',', absl::SkipEmpty())) {
      absl::StrAppend(&command, " -u ", name);
    }
  }
  return command + " '" + tools::ProgramDirectory() + "/pto_bench_baseline'";
}

RunOptions RunOptionsFor(const Flags& flags, const device::DeviceInfo& device, int threads,
                         BandwidthBurst* bandwidth) {
  RunOptions run;
  run.threads = threads;
  run.rotate_bytes = 2 * device.l3_bytes;
  run.timing.max_reps = flags.reps;
  run.timing.budget_seconds = flags.budget;
  run.device = &device;
  run.bandwidth = bandwidth;
  run.onnx_runtime = DefaultOnnxRuntimeCommands();
  if (!flags.onnxruntime_node.empty()) run.onnx_runtime.module_dir = flags.onnxruntime_node;
  if (!flags.in_process_baselines) {
    run.baseline_command = BaselineCommand();
    // Every repetition follows a pause (the others' turns, the wait for quiet) in which the
    // cores idle: long repetitions make waking the threads and the caches a small part of them.
    run.timing.min_rep_seconds = kProcessRepSeconds;
    // A library's first calls in a fresh process are slow (primitives made, pages touched):
    // calibrating on them gave oneDNN 3 calls per repetition.
    run.timing.warmup_seconds = kProcessWarmupSeconds;
  }
  return run;
}

// The rows of one thread count, and what they add to the run.
struct CasesRun {
  std::vector<Row> rows;
  std::string tuning_lines;  // with tuning: the tuner's figures per case
  int failures = 0;
};

CasesRun RunCases(const std::vector<CaseSpec>& cases, Runtime& runtime, const RunOptions& run,
                  bool tuned) {
  CasesRun out;
  const int threads = run.threads;
  for (const CaseSpec& c : cases) {
    std::fprintf(stderr, "[%d thread%s] %s\n", threads, threads == 1 ? "" : "s", c.name.c_str());
    out.rows.push_back(RunCase(c, runtime, run));
    out.failures += static_cast<int>(out.rows.back().failures.size());
    if (!tuned) continue;
    const std::string lines = TuningSummary(runtime.tuning_results(), c.name);
    out.tuning_lines += !lines.empty() ? lines
                                       : "  " + c.name +
                                             ": no kernel tuned (a tuning record from an earlier "
                                             "case applied, or nothing to tune)\n";
  }
  return out;
}

// The machine's speed drifts: the limits are measured again after the cases, and the roofline
// column uses the higher of each (a slow moment at the start would otherwise inflate every
// share).
void SetRooflineShares(const device::DeviceInfo& device, int threads, const MachineLimits& limits,
                       std::vector<Row>& rows) {
  const MachineLimits end = MeasureLimits(device, threads, kLimitBufferBytes);
  MachineLimits best = limits;
  best.peak_gflops = std::max(limits.peak_gflops, end.peak_gflops);
  best.bandwidth_gbs = std::max(limits.bandwidth_gbs, end.bandwidth_gbs);
  std::printf(
      "\nmeasured again after the cases: fp32 peak %.1f GFLOP/s, bandwidth %.1f GB/s; %%roof "
      "below uses the higher of each (%.1f GFLOP/s, %.1f GB/s)\n",
      end.peak_gflops, end.bandwidth_gbs, best.peak_gflops, best.bandwidth_gbs);
  for (Row& r : rows) {
    if (r.pto_seconds > 0) {
      r.roofline_share = RooflineSeconds(best, r.flops, r.bytes) / r.pto_seconds;
    }
  }
}

// The table, the tuner's figures, the targets set at this thread count, and at the reference
// thread count the baselines beside the reference figures.
void PrintResults(int threads, const CasesRun& run, bool tuned, const std::string& pto_column) {
  if (tuned) std::printf("\npto column: %s\n", pto_column.c_str());
  PrintTable(stdout, threads, run.rows);
  if (tuned) {
    std::printf(
        "\ntuning per kernel at %d thread%s (the tuner's times: default and tuned config "
        "interleaved; the table above timed the tuned kernels again):\n%s",
        threads, threads == 1 ? "" : "s", run.tuning_lines.c_str());
  }
  PrintTargets(stdout, threads, EvaluateTargets(run.rows, threads));
  if (threads == kReferenceThreads) PrintReferenceCheck(run.rows);
  std::fflush(stdout);
}

// Every case at one thread count, between measurements of the machine's limits; returns the
// failures, or -1 when pto's Runtime does not open (printed).
int RunAtThreads(const Flags& flags, const device::DeviceInfo& device,
                 const std::vector<CaseSpec>& cases, int threads, BandwidthBurst* bandwidth,
                 const std::string& pto_column) {
  const MachineLimits limits = MeasureLimits(device, threads, kLimitBufferBytes);
  PrintLimits(limits);
  absl::StatusOr<std::unique_ptr<Runtime>> runtime =
      Runtime::Open(PtoRuntimeOptions(threads, flags.tuning));
  if (!runtime.ok()) {
    std::fprintf(stderr, "pto: %s\n", std::string(runtime.status().message()).c_str());
    return -1;
  }
  const bool tuned = flags.tuning.trials_per_kernel > 0;
  CasesRun run =
      RunCases(cases, **runtime, RunOptionsFor(flags, device, threads, bandwidth), tuned);
  SetRooflineShares(device, threads, limits, run.rows);
  PrintResults(threads, run, tuned, pto_column);
  return run.failures;
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) {
    std::fprintf(
        stderr,
        "usage: pto_bench_kernels [--quick] [--filter SUBSTR] [--reps N] "
        "[--threads 2,1] [--budget SECONDS] [--tune-trials N [--tune-seconds S]] "
        "[--in-process-baselines] [--onnxruntime-node DIR]\n"
        "       pto_bench_kernels --sweep [--sweep-shape MxKxN] [--sweep-limit N] "
        "[--sweep-transposed-a] [--sweep-transposed-b] [--sweep-constant-b] [--sweep-csv FILE] "
        "[--sweep-configs \"F=V,...;...\"] [--sweep-sets N] "
        "[--threads T] [--reps N] "
        "[--budget SECONDS]\n"
        "       pto_bench_kernels --dump-asm [--quick] [--filter SUBSTR] "
        "[--threads T]\n");
    return 2;
  }
  const device::DeviceInfo device = device::DetectHost();
  if (!flags.dump_asm) PrintMachine(device, flags.in_process_baselines);
  if (flags.sweep) {
    SweepOptions sweep = flags.sweep_options;
    sweep.threads = flags.threads.front();
    sweep.timing.max_reps = flags.reps;
    sweep.timing.budget_seconds = flags.budget;
    return RunConfigSweep(sweep);
  }
  std::vector<CaseSpec> cases;
  for (CaseSpec& c : AllCases()) {
    if (flags.quick && !c.quick) continue;
    if (!flags.filter.empty() && c.name.find(flags.filter) == std::string::npos) continue;
    cases.push_back(std::move(c));
  }
  if (flags.dump_asm) return DumpAssembly(cases, flags.threads.front());
  std::printf(
      "cases    : %zu%s%s; up to %d repetitions, %.1f s budget per backend, the backends of a "
      "case timed in turn each repetition%s\n",
      cases.size(), flags.quick ? " (--quick)" : "",
      flags.filter.empty() ? "" : (" matching '" + flags.filter + "'").c_str(), flags.reps,
      flags.budget,
      flags.in_process_baselines
          ? " (baselines in this process)"
          : absl::StrFormat(" (baselines in processes of their own; repetitions >= %g ms, each "
                            "after the previous one's threads stopped spinning)",
                            kProcessRepSeconds * 1e3)
                .c_str());
  const std::string pto_column = TunedPtoColumn(flags.tuning);
  if (flags.tuning.trials_per_kernel > 0) std::printf("pto      : %s\n", pto_column.c_str());
  int failures = 0;
  // The bandwidth bursts' 256 MiB only when a memory-bound case runs.
  std::optional<BandwidthBurst> bandwidth_burst;
  for (const CaseSpec& c : cases) {
    if (c.memory_bound && !bandwidth_burst.has_value())
      bandwidth_burst.emplace(kBandwidthBurstBytes);
  }
  for (int threads : flags.threads) {
    const int run_failures =
        RunAtThreads(flags, device, cases, threads,
                     bandwidth_burst.has_value() ? &*bandwidth_burst : nullptr, pto_column);
    if (run_failures < 0) return 1;
    failures += run_failures;
  }
  std::printf("\n%d failure%s\n", failures, failures == 1 ? "" : "s");
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace pto::bench

int main(int argc, char** argv) {
  bool rerun = false;
  std::string set_by_bench;
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    set_by_bench += "OMP_WAIT_POLICY,";
    rerun = true;
  }
  const std::string core = pto::bench::OpenblasCoreOverride(pto::device::DetectHost().isa);
  if (std::getenv("OPENBLAS_CORETYPE") == nullptr && !core.empty()) {
    setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
    rerun = true;
  }
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT") == nullptr) {
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);
    set_by_bench += "OPENBLAS_THREAD_TIMEOUT,";
    rerun = true;
  }
  if (rerun) {
    if (!set_by_bench.empty()) setenv(pto::bench::kSetByBench, set_by_bench.c_str(), 1);
    execv("/proc/self/exe", argv);  // returns only on failure: then run with them set late
    std::fprintf(stderr,
                 "pto_bench_kernels: re-exec failed (%s); OMP_WAIT_POLICY, OPENBLAS_CORETYPE and "
                 "OPENBLAS_THREAD_TIMEOUT may not apply\n",
                 std::strerror(errno));
  }
  return pto::bench::Main(argc, argv);
}
