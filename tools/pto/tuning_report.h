// What `pto tune` shows: the progress line while it runs, and at the end a table per kernel
// (default time, tuned time, speed-up, trials, config) and the tuning curves as an SVG picture.
// (tools/pto/workload_file.h WriteTextFile writes the SVG.)
#ifndef PTO_TOOLS_PTO_TUNING_REPORT_H_
#define PTO_TOOLS_PTO_TUNING_REPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pto/options.h"

namespace pto::tools {

// The outcome of tuning one kernel (a fusion group at a shape class).
struct KernelTuningResult {
  std::string function, shape_class;
  std::string kernel;                             // KernelLabel
  double default_seconds = 0, tuned_seconds = 0;  // <= 0: not measured
  int64_t trials = 0, failed = 0;                 // failed: did not compile or were wrong
  std::string config;                             // the tuned config's text
  // (trial number, best seconds so far after it), trial numbers from 1, ascending.
  std::vector<std::pair<int64_t, double>> curve;
};

// How the report names a kernel: its symbol (KernelTuning::symbol, which tells apart kernels of
// one kind and fused ops) with the hash cut to kLabelHashDigits hex digits, like a short git
// hash: "f32_matmul_add_6x16_avx2_3f0c1a2b", a prefix of the symbol `pto dump --stage=asm`
// prints ("_checked" stays at the end of a checked kernel's). The symbol whole when its hash
// is not where kernel symbols have it; the kernel's name when the symbol is not known.
inline constexpr int kLabelHashDigits = 8;
std::string KernelLabel(const KernelTuning& tuning);

// The report row of a kernel the Runtime tuned (Runtime::tuning_results); a resumed kernel's
// curve starts after the trials it made before.
KernelTuningResult ResultOf(const KernelTuning& tuning);

// A time with a unit chosen for it, 3 or 4 significant digits: "850 ns", "12.3 µs",
// "1.25 ms", "2.50 s"; "-" when not positive.
std::string FormatSeconds(double seconds);

// A wall-clock duration: "9.4s", "42s", "3m05s", "1h02m".
std::string FormatElapsed(double seconds);

// Columns FUNCTION, KERNEL, SHAPE CLASS, DEFAULT, TUNED, SPEED-UP, TRIALS, CONFIG (times right
// aligned, in their units; speed-up = default / tuned as "1.42×"; trials as "64" or
// "64 (3 failed)"), one row per result in the given order, then a total line: the sums of the
// default and tuned times of the rows that have both, and their ratio. Ends with a newline.
std::string FormatTuningTable(const std::vector<KernelTuningResult>& results);

// The workload's estimated time per pass (the sum over its kernels of time per call x calls)
// before and after a tuning run, and how many of its kernels the run tuned.
struct WorkloadEstimate {
  double before_seconds = 0, after_seconds = 0;
  int64_t kernels_tuned = 0, kernels = 0;
};

// "estimated workload time (kernel time x calls, summed): 41.2 ms before, 33.0 ms after
// (1.25×); 12 of 165 kernels tuned\n" (the ratio "-" when a time is not positive).
std::string FormatWorkloadEstimate(const WorkloadEstimate& estimate);

// A self-contained SVG (no scripts, external fonts or links), the title at the top. With a
// workload curve ((wall seconds, estimated workload seconds) points, in time order), a panel on
// top plots it as a stepped line: the whole workload's estimated time against the run's wall
// time. Below, x = trial number, y = speed-up over the default (default / best so far, 1×
// dashed), one stepped polyline per result with a curve and a default time (distinct colours,
// then dash patterns beyond the palette), and a legend naming each kernel that has a curve,
// with its shape class, and one line counting the results without one. Text is XML-escaped.
std::string TuningCurvesSvg(const std::vector<KernelTuningResult>& results, std::string_view title,
                            const std::vector<std::pair<double, double>>& workload_curve = {});

// The state shown on `pto tune`'s progress line.
struct TuningProgress {
  int64_t kernel = 1, kernels = 1;  // the kernel being tuned, 1-based, of how many
  std::string name;                 // its KernelLabel
  int64_t trial = 0, trials = 0;    // trials done for it, of its trial budget
  double best_speedup = 0;          // default / best so far; <= 0: none measured yet
  double elapsed_seconds = 0;       // since tuning began
  double budget_seconds = 0;        // the overall time budget; <= 0: none
};

// "kernel 3/12 f32_matmul_add_6x16_avx2_3f0c1a2b · trial 17/64 · best 1.42× · 1m05s · ~3m20s
// left", at most kProgressColumns display columns (the name is shortened in the middle, "…",
// to fit, its end kept longer: where a kernel label has its hash). Time left is
// extrapolated from the elapsed time and the share of the work done (kernels done plus the
// current kernel's trial share), capped by what is left of the budget; "?" before any work.
inline constexpr int kProgressColumns = 100;
std::string FormatProgressLine(const TuningProgress& progress);

// Display columns of UTF-8 text (one per code point).
int64_t DisplayWidth(std::string_view text);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_TUNING_REPORT_H_
