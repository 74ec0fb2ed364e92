#include "tools/bench/targets.h"

#include <algorithm>
#include <optional>

namespace pto::bench {
namespace {

using Value = std::optional<double>;

Value Over(double pto, double baseline) {
  if (pto <= 0 || baseline <= 0) return std::nullopt;
  return pto / baseline;
}

Value VsOnednn(const Row& r) { return Over(r.pto, r.baseline[static_cast<int>(Column::kOnednn)]); }

Value VsPostOps(const Row& r) {
  return Over(r.pto, r.baseline[static_cast<int>(Column::kOnednnFused)]);
}

// The faster of the unfused oneDNN chain and the one with post-ops.
Value VsBestOnednn(const Row& r) {
  return Over(r.pto, std::max(r.baseline[static_cast<int>(Column::kOnednn)],
                              r.baseline[static_cast<int>(Column::kOnednnFused)]));
}

Value VsOnnxRuntime(const Row& r) { return Over(r.pto, OnnxRuntimeRate(r)); }

Value VsLibxsmm(const Row& r) {
  return Over(r.pto, r.baseline[static_cast<int>(Column::kLibxsmm)]);
}

Value Share(double share) { return share >= 0 ? Value(share) : std::nullopt; }

Value LimitShare(const Row& r) { return r.pto > 0 ? Share(r.case_limit_share) : std::nullopt; }

Value RooflineShare(const Row& r) { return r.pto > 0 ? Share(r.roofline_share) : std::nullopt; }

// The share of the unfused chain's peak intermediate memory that pto does without.
Value MemorySaved(const Row& r) {
  if (r.pto_intermediate_bytes < 0 || r.baseline_intermediate_bytes <= 0) return std::nullopt;
  return 1.0 - static_cast<double>(r.pto_intermediate_bytes) /
                   static_cast<double>(r.baseline_intermediate_bytes);
}

struct Target {
  const char* text;
  std::vector<TargetClass> covers;
  Value (*value)(const Row&);
  double bar;
  bool percent;
  int threads = 2;  // the thread count whose table the target is checked on
  // Another way to hold: `alternative` at least `alternative_bar` (a share, printed as %).
  Value (*alternative)(const Row&) = nullptr;
  double alternative_bar = 0;
};

// In docs/performance.md's order. The peak and bandwidth shares are %lim (the limit measured
// around the case), M = 1's roofline share is %roof.
const std::vector<Target>& Targets() {
  using C = TargetClass;
  static const auto* targets = new std::vector<Target>{
      {"matmul M >= 128: >= 1.0x oneDNN, or >= 85% of peak (%lim)",
       {C::kLargeMatmul},
       VsOnednn,
       1.0,
       false,
       2,
       LimitShare,
       0.85},
      {"M <= 32, W constant: >= 1.2x oneDNN, or >= 90% (%roof)",
       {C::kOneRowLinear, C::kFewRowsLinear},
       VsOnednn,
       1.2,
       false,
       2,
       RooflineShare,
       0.90},
      {"small matmuls at 1 thread: >= 1.0x LIBXSMM", {C::kSmallOdd}, VsLibxsmm, 1.0, false, 1},
      {"memory-bound ops and chains: >= 80% of the bandwidth (%lim)",
       {C::kMemoryOp, C::kMemoryChain},
       LimitShare,
       0.80,
       true},
      {"memory-bound chains: >= 2x the unfused oneDNN chain",
       {C::kMemoryChain},
       VsOnednn,
       2.0,
       false},
      {"memory-bound chains: >= 1.5x ONNX Runtime", {C::kMemoryChain}, VsOnnxRuntime, 1.5, false},
      {"compute-bound chains: >= 1.0x oneDNN with post-ops",
       {C::kComputeChain},
       VsPostOps,
       1.0,
       false},
      {"demo block: >= 2x ONNX Runtime", {C::kBlock}, VsOnnxRuntime, 2.0, false},
      {"demo block: >= 1.3x the faster oneDNN chain", {C::kBlock}, VsBestOnednn, 1.3, false},
      {"demo block: >= 30% less intermediate memory than unfused",
       {C::kBlock},
       MemorySaved,
       0.30,
       true},
  };
  return *targets;
}

std::string Format(double value, bool percent) {
  char text[32];
  if (percent) {
    std::snprintf(text, sizeof text, "%.0f%%", value * 100);
  } else {
    std::snprintf(text, sizeof text, "%.2fx", value);
  }
  return text;
}

// At most this many misses are named; the rest are counted.
constexpr size_t kNamedMisses = 4;

}  // namespace

std::vector<TargetResult> EvaluateTargets(const std::vector<Row>& rows, int threads) {
  std::vector<TargetResult> results;
  for (const Target& t : Targets()) {
    if (t.threads != threads) continue;
    TargetResult result;
    result.text = t.text;
    result.percent = t.percent;
    result.bar = t.bar;
    bool covers_any = false;
    for (const Row& r : rows) {
      if (std::find(t.covers.begin(), t.covers.end(), r.target) == t.covers.end()) continue;
      covers_any = true;
      const Value v = t.value(r);
      if (!v.has_value()) {
        result.unmeasured.push_back(r.name);
        continue;
      }
      result.lo = result.measured == 0 ? *v : std::min(result.lo, *v);
      result.hi = result.measured == 0 ? *v : std::max(result.hi, *v);
      ++result.measured;
      const Value alternative = t.alternative != nullptr ? t.alternative(r) : std::nullopt;
      if (*v >= t.bar || (alternative.has_value() && *alternative >= t.alternative_bar)) continue;
      TargetMiss miss{r.name, *v};
      if (alternative.has_value()) miss.name += " (" + Format(*alternative, true) + ")";
      // The bar's rate is bar x the baseline's, and the baseline's is pto's over the ratio.
      if (!t.percent && *v > 0 && r.case_limit > 0) {
        miss.bar_over_limit = t.bar * (r.pto / *v) / r.case_limit;
      }
      result.misses.push_back(std::move(miss));
    }
    if (!covers_any) continue;
    std::stable_sort(result.misses.begin(), result.misses.end(),
                     [](const TargetMiss& a, const TargetMiss& b) { return a.value < b.value; });
    results.push_back(std::move(result));
  }
  return results;
}

void PrintTargets(std::FILE* out, int threads, const std::vector<TargetResult>& results) {
  if (results.empty()) return;
  std::fprintf(out, "\nthe kernel targets at %d thread%s, this run:\n", threads,
               threads == 1 ? "" : "s");
  const char* row = "  %-62s %-7s %-15s %s\n";
  std::fprintf(out, row, "target", "holds", "range", "below the bar");
  for (const TargetResult& r : results) {
    const int holds = r.measured - static_cast<int>(r.misses.size());
    const std::string count = std::to_string(holds) + "/" + std::to_string(r.measured);
    std::string range = r.measured == 0 ? "-" : Format(r.lo, r.percent);
    if (r.measured > 0 && r.hi > r.lo) range += "-" + Format(r.hi, r.percent);
    std::string below;
    for (size_t i = 0; i < r.misses.size() && i < kNamedMisses; ++i) {
      if (i > 0) below += ", ";
      const TargetMiss& m = r.misses[i];
      below += m.name + " " + Format(m.value, r.percent);
      if (m.bar_over_limit > 0) below += " (bar " + Format(m.bar_over_limit, true) + " lim)";
    }
    if (r.misses.size() > kNamedMisses) {
      below += " and " + std::to_string(r.misses.size() - kNamedMisses) + " more";
    }
    if (!r.unmeasured.empty()) {
      if (!below.empty()) below += "; ";
      below += std::to_string(r.unmeasured.size()) + " not measured (" + r.unmeasured.front() +
               (r.unmeasured.size() > 1 ? ", ..." : "") + ")";
    }
    if (below.empty()) below = "-";
    std::fprintf(out, row, r.text.c_str(), count.c_str(), range.c_str(), below.c_str());
  }
}

}  // namespace pto::bench
