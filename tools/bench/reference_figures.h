// The reference figures of DESIGN.md ("Reference figures measured on this kind of machine":
// 2 cores, AVX-512, Zen 5). The bench prints its own measurements beside them and flags any
// more than 15% off, so that a broken bench shows itself (on another machine they are off
// anyway: the flag then says so, it does not fail the run).
#ifndef PTO_TOOLS_BENCH_REFERENCE_FIGURES_H_
#define PTO_TOOLS_BENCH_REFERENCE_FIGURES_H_

#include <string>
#include <vector>

namespace pto::bench {

inline constexpr int kReferenceThreads = 2;
inline constexpr double kReferencePeakGflops = 430;
inline constexpr double kReferenceBandwidthGbs = 44;
inline constexpr char kReferenceMachine[] = "2 cores, AVX-512, AMD Zen 5";

struct ReferenceFigure {
  std::string baseline;   // "oneDNN" or "OpenBLAS"
  std::string case_name;  // the bench case it applies to
  double gflops;          // at 2 threads
};

const std::vector<ReferenceFigure>& ReferenceFigures();

// "" when within 15% of the reference, else e.g. "-45% vs ref 330".
std::string ReferenceFlag(double measured, double reference);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_REFERENCE_FIGURES_H_
