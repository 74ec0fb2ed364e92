#include "tools/bench/table.h"

#include <algorithm>
#include <iterator>
#include <string>

namespace pto::bench {
namespace {

std::string Rate(double value, const std::string& note) {
  if (value < 0) return note.empty() ? "-" : note;
  char text[32];
  std::snprintf(text, sizeof text, value < 10 ? "%.2f" : "%.1f", value);
  return text;
}

std::string Percent(double share) {
  if (share < 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", share * 100);
  return text;
}

std::string MiB(int64_t bytes) {
  if (bytes < 0) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

// The ONNX Runtime column: the rate the targets use, '*' when it is ONNX Runtime's own time.
std::string OrtRate(const Row& r) {
  const int c = static_cast<int>(Column::kOnnxRuntime);
  const double rate = OnnxRuntimeRate(r);
  if (rate < 0) return Rate(-1, r.baseline_note[c]);
  return Rate(rate, "") + (rate > r.baseline[c] ? "*" : "");
}

}  // namespace

double BestBaseline(const Row& row) {
  return std::max(*std::max_element(std::begin(row.baseline), std::end(row.baseline)),
                  OnnxRuntimeRate(row));
}

double OnnxRuntimeRate(const Row& row) {
  const double timed = row.baseline[static_cast<int>(Column::kOnnxRuntime)];
  return timed < 0 ? -1 : std::max(timed, row.onnx_runtime_own);
}

void PrintTable(std::FILE* out, int threads, const std::vector<Row>& rows) {
  std::fprintf(out, "\n== %d thread%s: rates in GFLOP/s (GB/s where the unit says so) ==\n",
               threads, threads == 1 ? "" : "s");
  const char* header = "%-30s %-6s %8s %8s %9s %8s %8s %8s %8s %6s %6s %13s %9s\n";
  std::fprintf(out, header, "case", "unit", "pto", "oneDNN", "oneDNN+po", "OpenBLAS", "LIBXSMM",
               "ORT", "pto/best", "%roof", "%lim", "spread pto/bl", "max rel err");
  std::string group;
  for (const Row& r : rows) {
    if (r.group != group) {
      group = r.group;
      std::fprintf(out, "-- %s\n", group.c_str());
    }
    const double best = BestBaseline(r);
    char ratio[32] = "-", spread[48] = "-", error[32] = "-";
    if (r.pto > 0 && best > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", r.pto / best);
    if (r.pto_spread >= 0) {
      std::snprintf(spread, sizeof spread, "%.0f%%/%s", r.pto_spread * 100,
                    r.baseline_spread >= 0 ? Percent(r.baseline_spread).c_str() : "-");
    }
    if (r.max_rel_error >= 0) {
      std::snprintf(error, sizeof error, "%.1e%s", r.max_rel_error, r.error_failed ? " FAIL" : "");
    }
    std::fprintf(out, header, r.name.c_str(), r.memory_bound ? "GB/s" : "GF/s",
                 Rate(r.pto, "FAIL").c_str(), Rate(r.baseline[0], r.baseline_note[0]).c_str(),
                 Rate(r.baseline[1], r.baseline_note[1]).c_str(),
                 Rate(r.baseline[2], r.baseline_note[2]).c_str(),
                 Rate(r.baseline[3], r.baseline_note[3]).c_str(), OrtRate(r).c_str(), ratio,
                 Percent(r.roofline_share).c_str(), Percent(r.case_limit_share).c_str(), spread,
                 error);
  }
  std::fprintf(out,
               "%%roof: the roofline's time over pto's, from this run's peak and bandwidth "
               "(the higher of before and after the cases). %%lim: pto's rate over the limit "
               "measured in bursts right before and after the case's timing (their median): "
               "the fp32 peak (GF/s cases), the streaming bandwidth (GB/s cases). ORT: ONNX "
               "Runtime through its Node.js binding, timed in turns with pto; with '*' its own "
               "time per call (its profiler's, without the binding's copy of the outputs) where "
               "that is faster.\n");
  bool any_memory = false;
  for (const Row& r : rows) any_memory |= r.report_memory;
  if (any_memory) {
    std::fprintf(out,
                 "\npeak intermediate memory (pto: its plan's arena slots, from "
                 "Function::Dump(kExec); oneDNN: liveness over the chain's buffers):\n");
    for (const Row& r : rows) {
      if (!r.report_memory) continue;
      std::fprintf(out, "  %-30s pto %-12s oneDNN unfused %-12s oneDNN post-ops %s\n",
                   r.name.c_str(), MiB(r.pto_intermediate_bytes).c_str(),
                   MiB(r.baseline_intermediate_bytes).c_str(),
                   MiB(r.fused_intermediate_bytes).c_str());
    }
  }
  // Each note once (every case's ONNX Runtime process says its version and settings).
  std::vector<std::string> notes;
  for (const Row& r : rows) {
    for (const std::string& n : r.notes) {
      if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
    }
  }
  for (const std::string& n : notes) std::fprintf(out, "note: %s\n", n.c_str());
  for (const Row& r : rows) {
    for (const std::string& f : r.failures)
      std::fprintf(out, "FAILURE %s: %s\n", r.name.c_str(), f.c_str());
  }
}

}  // namespace pto::bench
