// The bench's targets (docs/performance.md), checked on one run's rows: which cases each target
// covers, the bar it sets, and which cases fall short of it. Most targets are set at 2 threads,
// the small matmuls' (against LIBXSMM) at 1.
#ifndef PTO_TOOLS_BENCH_TARGETS_H_
#define PTO_TOOLS_BENCH_TARGETS_H_

#include <cstdio>
#include <string>
#include <vector>

#include "tools/bench/table.h"

namespace pto::bench {

// A case below a target's bar.
struct TargetMiss {
  std::string name;  // the case, with the target's other value where it has one
  double value = 0;  // the target's value for the case
  // For a target relative to a baseline: the rate the bar asks for over the limit measured
  // around the case (%lim's limit); above 1, no rate the machine gave then would meet the bar.
  // -1 for share targets, or when the limit was not measured.
  double bar_over_limit = -1;
};

// One target over this run's rows.
struct TargetResult {
  std::string text;                // "matmul M >= 128: >= 1.0x oneDNN, or >= 85% of peak (%lim)"
  bool percent = false;            // values are shares (printed as %), else ratios (printed as x)
  double bar = 0;                  // a case holds when its value is at least this
  int measured = 0;                // rows covered that have the value
  double lo = 0, hi = 0;           // the values' range (when measured > 0)
  std::vector<TargetMiss> misses;  // below the bar, lowest first
  std::vector<std::string> unmeasured;  // covered, without the value (pto or baseline failed)
};

// The targets set at `threads` that cover at least one of `rows` (that thread count's table),
// in docs/performance.md's order. A miss of a target that can also hold another way names the
// case with that other value: "matmul 256x256x256 (59%)"; a miss of a target relative to a
// baseline prints what the bar asks of the machine: "block b4 s128 d128 1.20x (bar 120% lim)".
std::vector<TargetResult> EvaluateTargets(const std::vector<Row>& rows, int threads = 2);

void PrintTargets(std::FILE* out, int threads, const std::vector<TargetResult>& results);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_TARGETS_H_
