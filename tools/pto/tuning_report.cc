#include "tools/pto/tuning_report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pto::tools {
namespace {

std::string FormatSpeedup(double default_seconds, double tuned_seconds) {
  if (default_seconds <= 0 || tuned_seconds <= 0) return "-";
  return absl::StrFormat("%.2f×", default_seconds / tuned_seconds);
}

std::string FormatTrials(int64_t trials, int64_t failed) {
  return failed > 0 ? absl::StrCat(trials, " (", failed, " failed)") : absl::StrCat(trials);
}

// Rows of cells, padded to each column's display width: right-aligned where `right` says; the
// last column is not padded. A row that is empty becomes a rule as wide as the table.
std::string AlignRows(const std::vector<std::vector<std::string>>& rows,
                      const std::vector<bool>& right) {
  std::vector<int64_t> widths(right.size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
    }
  }
  int64_t total = 0;
  for (size_t c = 0; c < widths.size(); ++c) total += widths[c] + (c + 1 < widths.size() ? 2 : 0);
  std::string out;
  for (const auto& row : rows) {
    if (row.empty()) {
      out += std::string(total, '-') + "\n";
      continue;
    }
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const bool last = c + 1 == row.size();
      const std::string pad(widths[c] - DisplayWidth(row[c]), ' ');
      line += right[c] ? pad + row[c] : (last ? row[c] : row[c] + pad);
      if (!last) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A step of 1, 2 or 5 times a power of ten giving about `target` intervals over `span`.
double NiceStep(double span, int target) {
  const double raw = span / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (raw <= m * magnitude) return m * magnitude;
  }
  return 10 * magnitude;
}

// Tableau 10: distinct colours, readable on white.
constexpr const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr const char* kDashes[] = {"", "6 3", "2 3", "8 3 2 3"};
constexpr int kNumColours = sizeof(kColours) / sizeof(kColours[0]);
constexpr int kNumDashes = sizeof(kDashes) / sizeof(kDashes[0]);

// Speed-up over the default at each point of a curve; empty when it cannot be computed.
std::vector<std::pair<int64_t, double>> SpeedupCurve(const KernelTuningResult& r) {
  std::vector<std::pair<int64_t, double>> points;
  if (r.default_seconds <= 0) return points;
  for (const auto& [trial, best] : r.curve) {
    if (best > 0 && std::isfinite(best)) points.emplace_back(trial, r.default_seconds / best);
  }
  return points;
}

// Byte offset of the code point `n` code points into UTF-8 `text` (its size past the end).
size_t CodePointOffset(std::string_view text, int64_t n) {
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && n-- == 0) return i;
  }
  return text.size();
}

// `text` in at most `room` display columns: when longer, its start and end around "…", the end
// taking two thirds, so that a kernel label keeps its tile shape, ISA and hash.
std::string ShortenMiddle(std::string_view text, int64_t room) {
  const int64_t width = DisplayWidth(text);
  if (width <= room) return std::string(text);
  const int64_t tail = 2 * (room - 1) / 3;
  const int64_t head = room - 1 - tail;
  return std::string(text.substr(0, CodePointOffset(text, head))) + "…" +
         std::string(text.substr(CodePointOffset(text, width - tail)));
}

}  // namespace

int64_t DisplayWidth(std::string_view text) {
  int64_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string KernelLabel(const KernelTuning& k) {
  if (k.symbol.empty()) return k.kernel;
  // jit/kernel_symbol.h: ..._<isa>_<16 hex digits>[_checked].
  const std::string checked = "_checked";
  constexpr size_t kHashDigits = 16;
  const bool is_checked = k.symbol.ends_with(checked);
  const std::string rest = k.symbol.substr(0, k.symbol.size() - (is_checked ? checked.size() : 0));
  if (rest.size() <= kHashDigits || rest[rest.size() - kHashDigits - 1] != '_') return k.symbol;
  const size_t hash = rest.size() - kHashDigits;
  if (!std::all_of(rest.begin() + hash, rest.end(), absl::ascii_isxdigit)) return k.symbol;
  return rest.substr(0, hash + kLabelHashDigits) + (is_checked ? checked : "");
}

KernelTuningResult ResultOf(const KernelTuning& k) {
  KernelTuningResult r;
  r.function = k.function;
  r.shape_class = k.shape_class;
  r.kernel = KernelLabel(k);
  r.default_seconds = k.default_seconds;
  r.tuned_seconds = k.best_seconds;
  r.trials = k.trials;
  r.failed = k.failed;
  r.config = k.best_config;
  const int64_t first = k.trials - static_cast<int64_t>(k.curve.size());
  for (size_t i = 0; i < k.curve.size(); ++i) {
    if (k.curve[i] > 0) r.curve.emplace_back(first + static_cast<int64_t>(i) + 1, k.curve[i]);
  }
  return r;
}

std::string FormatSeconds(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return "-";
  constexpr const char* kUnits[] = {"ns", "µs", "ms", "s"};
  double value = seconds * 1e9;
  int unit = 0;
  // 999.5 rounds to "1000": such a value is shown in the next unit.
  while (unit < 3 && value >= 999.5) {
    value /= 1000;
    ++unit;
  }
  const int decimals = value >= 99.95 ? 0 : (value >= 9.995 ? 1 : 2);
  return absl::StrFormat("%.*f %s", decimals, value, kUnits[unit]);
}

std::string FormatElapsed(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return "0s";
  if (seconds < 9.95) return absl::StrFormat("%.1fs", seconds);
  const int64_t s = std::llround(seconds);
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%dh%02dm", s / 3600, (s % 3600) / 60);
}

std::string FormatTuningTable(const std::vector<KernelTuningResult>& results) {
  std::vector<std::vector<std::string>> rows = {
      {"FUNCTION", "KERNEL", "SHAPE CLASS", "DEFAULT", "TUNED", "SPEED-UP", "TRIALS", "CONFIG"}};
  double default_sum = 0, tuned_sum = 0;
  int64_t trials = 0, failed = 0;
  for (const KernelTuningResult& r : results) {
    rows.push_back({r.function, r.kernel, r.shape_class, FormatSeconds(r.default_seconds),
                    FormatSeconds(r.tuned_seconds),
                    FormatSpeedup(r.default_seconds, r.tuned_seconds),
                    FormatTrials(r.trials, r.failed), r.config.empty() ? "-" : r.config});
    if (r.default_seconds > 0 && r.tuned_seconds > 0) {
      default_sum += r.default_seconds;
      tuned_sum += r.tuned_seconds;
    }
    trials += r.trials;
    failed += r.failed;
  }
  rows.emplace_back();  // a rule
  rows.push_back({"total", absl::StrCat(results.size(), " kernels"), "", FormatSeconds(default_sum),
                  FormatSeconds(tuned_sum), FormatSpeedup(default_sum, tuned_sum),
                  FormatTrials(trials, failed), ""});
  return AlignRows(rows, {false, false, false, true, true, true, true, false});
}

namespace {

// The plot area of the tuning curves: axis ranges on tick steps and the page geometry.
struct CurvePlot {
  static constexpr double kWidth = 800, kLeft = 70, kRight = 20, kTop = 50, kPlotHeight = 360;
  static constexpr double kLegendRow = 18;
  static constexpr double kPlotWidth = kWidth - kLeft - kRight;
  // The workload panel's height, and the room under it for its axis labels.
  static constexpr double kWorkloadHeight = 180, kWorkloadGap = 70;
  double top = kTop;  // of the kernels' panel (below the workload panel when there is one)
  double x_max = 1, x_step = 1;
  double y_min = 1, y_max = 1, y_step = 1;
  int y_decimals = 0;
  double height = 0;

  double legend_top() const { return top + kPlotHeight + 55; }
  double X(double trial) const { return kLeft + trial / x_max * kPlotWidth; }
  double Y(double speedup) const { return top + (y_max - speedup) / (y_max - y_min) * kPlotHeight; }
};

// Axis ranges on tick steps, at least 0.1× tall so a flat curve is not blown up; `rows` legend
// rows.
CurvePlot PlotFor(const std::vector<std::vector<std::pair<int64_t, double>>>& curves, double top,
                  size_t rows) {
  int64_t max_trial = 1;
  CurvePlot p;
  p.top = top;
  for (const auto& curve : curves) {
    for (const auto& [trial, speedup] : curve) {
      max_trial = std::max(max_trial, trial);
      p.y_min = std::min(p.y_min, speedup);
      p.y_max = std::max(p.y_max, speedup);
    }
  }
  p.x_step = std::max(1.0, NiceStep(static_cast<double>(max_trial), 8));
  p.x_max = std::ceil(max_trial / p.x_step) * p.x_step;
  if (p.y_max - p.y_min < 0.1) p.y_max = p.y_min + 0.1;
  p.y_step = NiceStep(p.y_max - p.y_min, 6);
  p.y_min = std::floor(p.y_min / p.y_step + 1e-9) * p.y_step;
  p.y_max = std::ceil(p.y_max / p.y_step - 1e-9) * p.y_step;
  p.y_decimals = std::clamp(static_cast<int>(-std::floor(std::log10(p.y_step))), 0, 3);
  p.height = p.legend_top() + CurvePlot::kLegendRow * static_cast<double>(rows) + 10;
  return p;
}

// The workload panel: its estimated time (y, from 0) against wall time (x), a stepped line with
// a dot at each point, the first and last values written next to it.
void AppendWorkloadPanel(const std::vector<std::pair<double, double>>& curve, std::string& svg) {
  using P = CurvePlot;
  double x_max = 0, y_max = 0;
  for (const auto& [x, y] : curve) {
    x_max = std::max(x_max, x);
    y_max = std::max(y_max, y);
  }
  const double x_step = NiceStep(std::max(x_max, 1e-3), 8);
  x_max = std::ceil(x_max / x_step - 1e-9) * x_step;
  if (!(y_max > 0)) y_max = 1e-9;
  const double y_step = NiceStep(y_max, 4);
  y_max = std::ceil(y_max / y_step - 1e-9) * y_step;
  const double bottom = P::kTop + P::kWorkloadHeight;
  auto X = [&](double x) { return P::kLeft + x / x_max * P::kPlotWidth; };
  auto Y = [&](double y) { return bottom - y / y_max * P::kWorkloadHeight; };
  for (double x = 0; x <= x_max + x_step * 1e-6; x += x_step) {
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                          "stroke=\"#e0e0e0\"/><text x=\"%.1f\" y=\"%.1f\" "
                          "text-anchor=\"middle\">%s</text>\n",
                          X(x), P::kTop, X(x), bottom + 5, X(x), bottom + 18, FormatElapsed(x));
  }
  for (double y = 0; y <= y_max + y_step * 1e-6; y += y_step) {
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                          "stroke=\"#e0e0e0\"/><text x=\"%.1f\" y=\"%.1f\" "
                          "text-anchor=\"end\">%s</text>\n",
                          P::kLeft - 5, Y(y), P::kLeft + P::kPlotWidth, Y(y), P::kLeft - 8,
                          Y(y) + 4, y > 0 ? FormatSeconds(y) : "0");
  }
  absl::StrAppendFormat(&svg,
                        "<path d=\"M%.1f %.1f V%.1f H%.1f\" fill=\"none\" stroke=\"black\"/>\n",
                        P::kLeft, P::kTop, bottom, P::kLeft + P::kPlotWidth);
  absl::StrAppendFormat(&svg,
                        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">wall time of the "
                        "run</text>\n",
                        P::kLeft + P::kPlotWidth / 2, bottom + 36);
  absl::StrAppendFormat(&svg,
                        "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">estimated workload "
                        "time (kernel time × calls, summed): %s → %s</text>\n",
                        P::kLeft, P::kTop - 6, FormatSeconds(curve.front().second),
                        FormatSeconds(curve.back().second));
  std::string points;
  for (size_t k = 0; k < curve.size(); ++k) {
    if (k > 0)
      absl::StrAppendFormat(&points, "%.1f,%.1f ", X(curve[k].first), Y(curve[k - 1].second));
    absl::StrAppendFormat(&points, "%.1f,%.1f ", X(curve[k].first), Y(curve[k].second));
  }
  points.pop_back();
  absl::StrAppendFormat(&svg,
                        "<polyline class=\"workload\" fill=\"none\" stroke=\"black\" "
                        "stroke-width=\"2\" points=\"%s\"/>\n",
                        points);
  absl::StrAppendFormat(&svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"black\"/>\n",
                        X(curve.back().first), Y(curve.back().second));
}

// The page, the title, the grid with its tick labels, the axes with their labels and the
// default's level (a dashed line at 1×).
void AppendFrame(const CurvePlot& p, std::string_view title, std::string& svg) {
  using P = CurvePlot;
  absl::StrAppendFormat(&svg,
                        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                        "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
                        P::kWidth, p.height, P::kWidth, p.height);
  absl::StrAppend(&svg, "<title>", XmlEscape(title), "</title>\n");
  absl::StrAppendFormat(&svg, "<rect width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", P::kWidth,
                        p.height);
  absl::StrAppendFormat(&svg,
                        "<text x=\"%.1f\" y=\"28\" text-anchor=\"middle\" font-size=\"16\" "
                        "font-weight=\"bold\">%s</text>\n",
                        P::kWidth / 2, XmlEscape(title));
  for (double x = 0; x <= p.x_max + 1e-9; x += p.x_step) {
    absl::StrAppendFormat(
        &svg,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>"
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>\n",
        p.X(x), p.top, p.X(x), p.top + P::kPlotHeight + 5, p.X(x), p.top + P::kPlotHeight + 18, x);
  }
  for (double y = p.y_min; y <= p.y_max + p.y_step * 1e-6; y += p.y_step) {
    absl::StrAppendFormat(
        &svg,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>"
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*f×</text>\n",
        P::kLeft - 5, p.Y(y), P::kLeft + P::kPlotWidth, p.Y(y), P::kLeft - 8, p.Y(y) + 4,
        p.y_decimals, y);
  }
  absl::StrAppendFormat(&svg,
                        "<path d=\"M%.1f %.1f V%.1f H%.1f\" fill=\"none\" stroke=\"black\"/>\n",
                        P::kLeft, p.top, p.top + P::kPlotHeight, P::kLeft + P::kPlotWidth);
  absl::StrAppendFormat(&svg, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">trial</text>\n",
                        P::kLeft + P::kPlotWidth / 2, p.top + P::kPlotHeight + 36);
  absl::StrAppendFormat(&svg,
                        "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" "
                        "transform=\"rotate(-90 16 %.1f)\">speed-up over the default config, "
                        "best so far</text>\n",
                        p.top + P::kPlotHeight / 2, p.top + P::kPlotHeight / 2);
  absl::StrAppendFormat(&svg,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\" "
                        "stroke-dasharray=\"4 4\"/>\n",
                        P::kLeft, p.Y(1), P::kLeft + P::kPlotWidth, p.Y(1));
}

// Kernel `i`'s stepped line (the best so far holds until the next improvement), a dot at its
// end, and its legend row.
void AppendCurve(const CurvePlot& p, size_t i, const KernelTuningResult& r,
                 const std::vector<std::pair<int64_t, double>>& curve, std::string& svg) {
  using P = CurvePlot;
  const char* colour = kColours[i % kNumColours];
  const char* dash = kDashes[(i / kNumColours) % kNumDashes];
  const std::string dash_attr =
      *dash == '\0' ? "" : absl::StrCat(" stroke-dasharray=\"", dash, "\"");
  if (!curve.empty()) {
    std::string points;
    for (size_t k = 0; k < curve.size(); ++k) {
      const double x = p.X(static_cast<double>(curve[k].first));
      if (k > 0) absl::StrAppendFormat(&points, "%.1f,%.1f ", x, p.Y(curve[k - 1].second));
      absl::StrAppendFormat(&points, "%.1f,%.1f ", x, p.Y(curve[k].second));
    }
    points.pop_back();
    absl::StrAppendFormat(&svg,
                          "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s "
                          "points=\"%s\"/>\n",
                          colour, dash_attr, points);
    absl::StrAppendFormat(&svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                          p.X(static_cast<double>(curve.back().first)), p.Y(curve.back().second),
                          colour);
  }
  const double y = p.legend_top() + P::kLegendRow * static_cast<double>(i);
  // The final speed-up as in the table (the tuned time), else the curve's last.
  const double final_seconds = r.tuned_seconds > 0 || curve.empty()
                                   ? r.tuned_seconds
                                   : r.default_seconds / curve.back().second;
  const std::string label = absl::StrCat(r.kernel, " @ ", r.shape_class, "  ",
                                         FormatSpeedup(r.default_seconds, final_seconds));
  absl::StrAppendFormat(&svg,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                        "stroke-width=\"2\"%s/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                        P::kLeft, y, P::kLeft + 24, y, colour, dash_attr, P::kLeft + 30, y + 4,
                        XmlEscape(label));
}

}  // namespace

std::string TuningCurvesSvg(const std::vector<KernelTuningResult>& results, std::string_view title,
                            const std::vector<std::pair<double, double>>& workload_curve) {
  // Only the results with a curve are drawn and named in the legend.
  std::vector<size_t> drawn;
  std::vector<std::vector<std::pair<int64_t, double>>> curves;
  for (size_t i = 0; i < results.size(); ++i) {
    std::vector<std::pair<int64_t, double>> curve = SpeedupCurve(results[i]);
    if (curve.empty()) continue;
    drawn.push_back(i);
    curves.push_back(std::move(curve));
  }
  const size_t without = results.size() - drawn.size();
  const double top = workload_curve.empty()
                         ? CurvePlot::kTop
                         : CurvePlot::kTop + CurvePlot::kWorkloadHeight + CurvePlot::kWorkloadGap;
  const CurvePlot plot = PlotFor(curves, top, curves.size() + (without > 0 ? 1 : 0));
  std::string svg;
  AppendFrame(plot, title, svg);
  if (!workload_curve.empty()) AppendWorkloadPanel(workload_curve, svg);
  for (size_t k = 0; k < drawn.size(); ++k) {
    AppendCurve(plot, k, results[drawn[k]], curves[k], svg);
  }
  if (without > 0) {
    absl::StrAppendFormat(
        &svg,
        "<text x=\"%.1f\" y=\"%.1f\" fill=\"#555555\">%d %s without a "
        "curve (see the table)</text>\n",
        CurvePlot::kLeft,
        plot.legend_top() + CurvePlot::kLegendRow * static_cast<double>(drawn.size()) + 4, without,
        without == 1 ? "kernel" : "kernels");
  }
  svg += "</svg>\n";
  return svg;
}

std::string FormatWorkloadEstimate(const WorkloadEstimate& e) {
  return absl::StrCat("estimated workload time (kernel time × calls, summed): ",
                      FormatSeconds(e.before_seconds), " before, ", FormatSeconds(e.after_seconds),
                      " after (", FormatSpeedup(e.before_seconds, e.after_seconds), "); ",
                      e.kernels_tuned, " of ", e.kernels, " kernels tuned\n");
}

std::string FormatProgressLine(const TuningProgress& p) {
  const double trial_share =
      p.trials > 0 ? std::clamp(static_cast<double>(p.trial) / p.trials, 0.0, 1.0) : 0.0;
  const double done = p.kernels > 0 ? (static_cast<double>(p.kernel - 1) + trial_share) /
                                          static_cast<double>(p.kernels)
                                    : 0.0;
  const double budget_left =
      p.budget_seconds > 0 ? std::max(0.0, p.budget_seconds - p.elapsed_seconds) : -1;
  double left = -1;
  if (done > 0) left = p.elapsed_seconds * (1 - done) / done;
  if (budget_left >= 0) left = left < 0 ? budget_left : std::min(left, budget_left);

  const std::string rest = absl::StrCat(
      " · trial ", p.trial, p.trials > 0 ? absl::StrCat("/", p.trials) : "", " · best ",
      p.best_speedup > 0 ? absl::StrFormat("%.2f×", p.best_speedup) : "-", " · ",
      FormatElapsed(p.elapsed_seconds), " · ", left < 0 ? "?" : "~" + FormatElapsed(left), " left");
  const std::string head = absl::StrCat("kernel ", p.kernel, "/", p.kernels, " ");
  // The name gets what the rest leaves of the line.
  const int64_t room =
      std::max<int64_t>(1, kProgressColumns - DisplayWidth(head) - DisplayWidth(rest));
  return head + ShortenMiddle(p.name, room) + rest;
}

}  // namespace pto::tools
