#include "tools/pto/tuning_report.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pto::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

TEST(FormatSecondsTest, PicksUnitAndDigits) {
  EXPECT_EQ(FormatSeconds(850e-9), "850 ns");
  EXPECT_EQ(FormatSeconds(12.34e-6), "12.3 µs");
  EXPECT_EQ(FormatSeconds(1.25e-3), "1.25 ms");
  EXPECT_EQ(FormatSeconds(999.7e-6), "1.00 ms");
  EXPECT_EQ(FormatSeconds(2.5), "2.50 s");
  EXPECT_EQ(FormatSeconds(0), "-");
  EXPECT_EQ(FormatSeconds(-1), "-");
}

TEST(FormatElapsedTest, SecondsMinutesHours) {
  EXPECT_EQ(FormatElapsed(4.24), "4.2s");
  EXPECT_EQ(FormatElapsed(42), "42s");
  EXPECT_EQ(FormatElapsed(185), "3m05s");
  EXPECT_EQ(FormatElapsed(3720), "1h02m");
  EXPECT_EQ(FormatElapsed(0), "0s");
}

std::vector<KernelTuningResult> Results() {
  KernelTuningResult matmul{.function = "block",
                            .shape_class = "in0.0=[8..15]",
                            .kernel = "f32_matmul_bias_gelu",
                            .default_seconds = 200e-6,
                            .tuned_seconds = 100e-6,
                            .trials = 64,
                            .failed = 3,
                            .config = "tile 8x32x256 u4",
                            .curve = {{1, 180e-6}, {2, 180e-6}, {5, 120e-6}, {9, 100e-6}}};
  KernelTuningResult softmax{.function = "block",
                             .shape_class = "in0.0=[8..15]",
                             .kernel = "f32_softmax",
                             .default_seconds = 1.5e-3,
                             .tuned_seconds = 1.2e-3,
                             .trials = 20,
                             .failed = 0,
                             .config = "vec 16 rows 4",
                             .curve = {{1, 1.5e-3}, {20, 1.2e-3}}};
  return {matmul, softmax};
}

// The display column where `needle` starts in `line`.
int64_t ColumnOf(std::string_view line, std::string_view needle) {
  const size_t at = line.find(needle);
  EXPECT_NE(at, std::string_view::npos) << needle << " not in " << line;
  return DisplayWidth(line.substr(0, at));
}

TEST(FormatTuningTableTest, RowsSpeedUpsAndTotal) {
  const std::string table = FormatTuningTable(Results());
  std::vector<std::string> lines = absl::StrSplit(table, '\n');
  ASSERT_EQ(lines.size(), 6u) << table;  // header, 2 rows, rule, total, ""
  EXPECT_EQ(lines.back(), "");
  EXPECT_EQ(lines[0],
            "FUNCTION  KERNEL                SHAPE CLASS    DEFAULT    TUNED  SPEED-UP         "
            "TRIALS  CONFIG");
  EXPECT_EQ(lines[1],
            "block     f32_matmul_bias_gelu  in0.0=[8..15]   200 µs   100 µs     2.00×  64 (3 "
            "failed)  tile 8x32x256 u4");
  EXPECT_EQ(lines[2],
            "block     f32_softmax           in0.0=[8..15]  1.50 ms  1.20 ms     1.25×             "
            "20  vec 16 rows 4");
  EXPECT_THAT(lines[3], StartsWith("-----"));
  // 1.7 ms against 1.3 ms: 1.31×.
  EXPECT_EQ(lines[4],
            "total     2 kernels                            1.70 ms  1.30 ms     1.31×  84 (3 "
            "failed)");
  // Multi-byte units do not shift the columns.
  EXPECT_EQ(ColumnOf(lines[0], "CONFIG"), ColumnOf(lines[1], "tile"));
  EXPECT_EQ(ColumnOf(lines[0], "CONFIG"), ColumnOf(lines[2], "vec"));
}

TEST(FormatTuningTableTest, UnmeasuredRowsShowDashesAndStayOutOfTheTotal) {
  std::vector<KernelTuningResult> results = Results();
  results[1].tuned_seconds = 0;
  results[1].config = "";
  const std::string table = FormatTuningTable(results);
  std::vector<std::string> lines = absl::StrSplit(table, '\n');
  ASSERT_EQ(lines.size(), 6u) << table;
  EXPECT_THAT(lines[2], HasSubstr("1.50 ms       -         -"));
  EXPECT_THAT(lines[2], testing::EndsWith("  -"));
  EXPECT_THAT(lines[4], HasSubstr(" 200 µs  100 µs     2.00×  84 (3 failed)"));
}

// A tiny well-formedness check: tags balance, one root, attribute values quoted without '<',
// '&' only in the five entities. Returns "" or the first problem.
std::string XmlProblem(std::string_view xml) {
  std::vector<std::string> open;
  int roots = 0;
  auto check_amps = [](std::string_view text) -> std::string {
    for (size_t i = text.find('&'); i != std::string_view::npos; i = text.find('&', i + 1)) {
      bool entity = false;
      for (std::string_view e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"}) {
        entity |= text.substr(i, e.size()) == e;
      }
      if (!entity) return "bare & in " + std::string(text.substr(i, 20));
    }
    return "";
  };
  size_t pos = 0;
  while (pos < xml.size()) {
    const size_t lt = xml.find('<', pos);
    const std::string_view text =
        xml.substr(pos, lt == std::string_view::npos ? xml.npos : lt - pos);
    if (std::string p = check_amps(text); !p.empty()) return p;
    if (text.find('>') != std::string_view::npos) return "bare > in text";
    if (lt == std::string_view::npos) break;
    if (xml.substr(lt, 2) == "<?") {
      pos = xml.find("?>", lt) + 2;
      continue;
    }
    // The tag ends at the first '>' outside quotes.
    size_t gt = lt + 1;
    bool quoted = false;
    for (; gt < xml.size() && (quoted || xml[gt] != '>'); ++gt) {
      if (xml[gt] == '"') quoted = !quoted;
      if (quoted && xml[gt] == '<') return "< in an attribute value";
    }
    if (gt >= xml.size()) return "unterminated tag";
    std::string_view tag = xml.substr(lt + 1, gt - lt - 1);
    if (std::string p = check_amps(tag); !p.empty()) return p;
    if (tag.starts_with("/")) {
      if (open.empty() || open.back() != tag.substr(1)) {
        return "closing " + std::string(tag) + " does not match";
      }
      open.pop_back();
    } else {
      const bool self_closing = tag.ends_with("/");
      const std::string name(tag.substr(0, tag.find_first_of(" /")));
      if (open.empty()) ++roots;
      if (!self_closing) open.push_back(name);
    }
    pos = gt + 1;
  }
  if (!open.empty()) return "unclosed " + open.back();
  if (roots != 1) return "roots: " + std::to_string(roots);
  return "";
}

TEST(XmlProblemTest, CatchesBrokenXml) {
  EXPECT_EQ(XmlProblem("<a><b/>x &amp; y</a>"), "");
  EXPECT_NE(XmlProblem("<a><b></a>"), "");
  EXPECT_NE(XmlProblem("<a>x & y</a>"), "");
  EXPECT_NE(XmlProblem("<a t=\"<\"/>"), "");
  EXPECT_NE(XmlProblem("<a/><b/>"), "");
}

int Count(std::string_view text, std::string_view needle) {
  int n = 0;
  for (size_t i = text.find(needle); i != std::string_view::npos; i = text.find(needle, i + 1)) {
    ++n;
  }
  return n;
}

TEST(TuningCurvesSvgTest, WellFormedWithOnePolylinePerCurveAndEscapedNames) {
  std::vector<KernelTuningResult> results = Results();
  results[0].kernel = "matmul<8x32> & \"bias\"";
  KernelTuningResult no_curve{.function = "block", .shape_class = "static", .kernel = "f32_add"};
  results.push_back(no_curve);
  const std::string svg = TuningCurvesSvg(results, "tune <demo> & co");
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_THAT(svg, StartsWith("<?xml"));
  EXPECT_THAT(svg, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(Count(svg, "<polyline"), 2);
  EXPECT_THAT(svg, HasSubstr("matmul&lt;8x32&gt; &amp; &quot;bias&quot;"));
  EXPECT_THAT(svg, Not(HasSubstr("matmul<8x32>")));
  EXPECT_THAT(svg, HasSubstr("<title>tune &lt;demo&gt; &amp; co</title>"));
  // Only kernels with a curve are in the legend; the others are counted in one line.
  EXPECT_THAT(svg, Not(HasSubstr("f32_add")));
  EXPECT_THAT(svg, Not(HasSubstr("(no curve)")));
  EXPECT_EQ(Count(svg, "stroke-width=\"2\"/><text"), 2);  // legend rows
  EXPECT_THAT(svg, HasSubstr(">1 kernel without a curve (see the table)</text>"));
  // Without a workload curve there is no workload panel.
  EXPECT_THAT(svg, Not(HasSubstr("estimated workload time")));
  EXPECT_THAT(svg, HasSubstr("speed-up over the default config"));
  EXPECT_THAT(svg, HasSubstr(">trial</text>"));
  // Distinct colours for the two curves.
  EXPECT_THAT(svg, HasSubstr("stroke=\"#1f77b4\" stroke-width=\"1.5\""));
  EXPECT_THAT(svg, HasSubstr("stroke=\"#ff7f0e\" stroke-width=\"1.5\""));
  // The final speed-ups are in the legend.
  EXPECT_THAT(svg, HasSubstr("@ in0.0=[8..15]  2.00×"));
  EXPECT_THAT(svg, HasSubstr("f32_softmax @ in0.0=[8..15]  1.25×"));
  // The legend's speed-up is the tuned time's, as in the table, even where the curve ends
  // elsewhere.
  results[1].tuned_seconds = 1e-3;
  EXPECT_THAT(TuningCurvesSvg(results, "t"), HasSubstr("f32_softmax @ in0.0=[8..15]  1.50×"));
  // Nothing external.
  EXPECT_THAT(svg, Not(HasSubstr("<script")));
  EXPECT_THAT(svg, Not(HasSubstr("href")));
  EXPECT_THAT(svg, Not(HasSubstr("@import")));
}

TEST(TuningCurvesSvgTest, ManyKernelsStillDistinctAndEmptyIsValid) {
  std::vector<KernelTuningResult> results;
  for (int i = 0; i < 12; ++i) {
    KernelTuningResult r = Results()[0];
    r.kernel = "k" + std::to_string(i);
    results.push_back(r);
  }
  const std::string svg = TuningCurvesSvg(results, "many");
  EXPECT_EQ(XmlProblem(svg), "");
  EXPECT_EQ(Count(svg, "<polyline"), 12);
  // Beyond ten colours the palette repeats with a dash pattern.
  EXPECT_EQ(Count(svg, "stroke=\"#1f77b4\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\""), 1);
  EXPECT_EQ(XmlProblem(TuningCurvesSvg({}, "nothing tuned")), "");
}

TEST(TuningCurvesSvgTest, WorkloadTimeAgainstWallTimeOnTop) {
  std::vector<KernelTuningResult> results = Results();
  for (int i = 0; i < 3; ++i) {
    results.push_back({.function = "block", .shape_class = "static", .kernel = "f32_add"});
  }
  // Profiled after 2 s at 10 ms; rounds end at 6 s (8 ms) and 10 s (7.5 ms).
  const std::vector<std::pair<double, double>> workload = {{2, 10e-3}, {6, 8e-3}, {10, 7.5e-3}};
  const std::string svg = TuningCurvesSvg(results, "t", workload);
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_THAT(svg, HasSubstr(">estimated workload time (kernel time × calls, summed): "
                             "10.0 ms → 7.50 ms</text>"));
  EXPECT_THAT(svg, HasSubstr(">wall time of the run</text>"));
  // x from 0 to 10 s in steps of 2 s (the picture is 800 wide, plot 710 wide from x = 70);
  // y from 0 to 10 ms in steps of 5 ms, the panel 180 tall from y = 50: a step per round.
  EXPECT_THAT(svg, HasSubstr("<polyline class=\"workload\" fill=\"none\" stroke=\"black\" "
                             "stroke-width=\"2\" points=\"212.0,50.0 496.0,50.0 496.0,86.0 "
                             "780.0,86.0 780.0,95.0\"/>"));
  EXPECT_THAT(svg, HasSubstr(">5.00 ms</text>"));
  EXPECT_THAT(svg, HasSubstr(">10s</text>"));
  // The workload panel's axes on top; the kernels' panel and its legend below it.
  EXPECT_THAT(svg, HasSubstr("<path d=\"M70.0 50.0 V230.0 H780.0\""));
  EXPECT_EQ(Count(svg, "<polyline"), 3);
  EXPECT_EQ(Count(svg, "stroke-width=\"2\"/><text"), 2);
  EXPECT_THAT(svg, HasSubstr(">3 kernels without a curve (see the table)</text>"));
  // The kernels' panel starts 250 lower than without the workload panel: 300.
  EXPECT_THAT(svg, HasSubstr("<path d=\"M70.0 300.0 V660.0 H780.0\""));
  // Legend: two rows from y = 715, the count line, then the page ends (height 715 + 3 x 18 +
  // 10).
  EXPECT_THAT(svg, HasSubstr("height=\"779\""));
}

TEST(FormatWorkloadEstimateTest, BeforeAfterRatioAndKernelsTuned) {
  WorkloadEstimate e;
  e.before_seconds = 41.2e-3;
  e.after_seconds = 33.0e-3;
  e.kernels_tuned = 12;
  e.kernels = 165;
  EXPECT_EQ(FormatWorkloadEstimate(e),
            "estimated workload time (kernel time × calls, summed): 41.2 ms before, 33.0 ms "
            "after (1.25×); 12 of 165 kernels tuned\n");
  e.after_seconds = 0;
  e.kernels_tuned = 0;
  EXPECT_EQ(FormatWorkloadEstimate(e),
            "estimated workload time (kernel time × calls, summed): 41.2 ms before, - after "
            "(-); 0 of 165 kernels tuned\n");
}

TEST(FormatProgressLineTest, ContentAndTimeLeft) {
  TuningProgress p{.kernel = 3,
                   .kernels = 4,
                   .name = "f32_matmul",
                   .trial = 32,
                   .trials = 64,
                   .best_speedup = 1.4249,
                   .elapsed_seconds = 100,
                   .budget_seconds = 0};
  // Done (2 + 32/64) / 4 = 62.5% in 100 s: 60 s left.
  EXPECT_EQ(FormatProgressLine(p),
            "kernel 3/4 f32_matmul · trial 32/64 · best 1.42× · 1m40s · ~1m00s left");
  p.budget_seconds = 130;  // the budget ends sooner
  EXPECT_EQ(FormatProgressLine(p),
            "kernel 3/4 f32_matmul · trial 32/64 · best 1.42× · 1m40s · ~30s left");
  p = TuningProgress{.kernel = 1, .kernels = 5, .name = "k", .trials = 10};
  EXPECT_EQ(FormatProgressLine(p), "kernel 1/5 k · trial 0/10 · best - · 0s · ? left");
  p.budget_seconds = 600;
  EXPECT_EQ(FormatProgressLine(p), "kernel 1/5 k · trial 0/10 · best - · 0s · ~10m00s left");
}

TEST(FormatProgressLineTest, LongNamesAreShortenedToFitTheLine) {
  TuningProgress p{.kernel = 12,
                   .kernels = 120,
                   .name = std::string(150, 'n'),
                   .trial = 1000,
                   .trials = 1000,
                   .best_speedup = 12.5,
                   .elapsed_seconds = 7200,
                   .budget_seconds = 9000};
  const std::string line = FormatProgressLine(p);
  EXPECT_EQ(DisplayWidth(line), kProgressColumns) << line;
  EXPECT_THAT(line, StartsWith("kernel 12/120 nnnn"));
  EXPECT_THAT(line, HasSubstr("n…n"));
  EXPECT_THAT(line, HasSubstr("n · trial 1000/1000 · best 12.50× · 2h00m · ~30m00s left"));
  p.name = std::string(20, 'n');
  EXPECT_LT(DisplayWidth(FormatProgressLine(p)), kProgressColumns);
  EXPECT_THAT(FormatProgressLine(p), HasSubstr(std::string(20, 'n') + " · "));
  // A long kernel label keeps its start and its hash.
  p.name = "f32_elementwise_" + std::string(60, 'x') + "_u4x8_avx2_3f0c1a2b";
  const std::string label_line = FormatProgressLine(p);
  EXPECT_EQ(DisplayWidth(label_line), kProgressColumns) << label_line;
  EXPECT_THAT(label_line, StartsWith("kernel 12/120 f32_elem"));
  EXPECT_THAT(label_line, HasSubstr("…x_u4x8_avx2_3f0c1a2b · trial 1000/1000"));
}

TEST(KernelLabelTest, SymbolWithItsHashShortened) {
  KernelTuning k{.kernel = "f32_matmul_add", .symbol = "f32_matmul_add_6x16_avx2_3f0c1a2b4d5e6f70"};
  EXPECT_EQ(KernelLabel(k), "f32_matmul_add_6x16_avx2_3f0c1a2b");
  EXPECT_TRUE(k.symbol.starts_with(KernelLabel(k)));
  k.symbol = "f32_matmul_add_6x16_avx2_3f0c1a2b4d5e6f70_checked";
  EXPECT_EQ(KernelLabel(k), "f32_matmul_add_6x16_avx2_3f0c1a2b_checked");
  // Two kernels of one kind and fused ops in one shape class: their labels differ.
  KernelTuning other = k;
  other.symbol = "f32_matmul_add_6x16_avx2_9a8b7c6d5e4f3021";
  EXPECT_NE(KernelLabel(other), KernelLabel(k));
}

TEST(KernelLabelTest, NameWithoutSymbolAndWholeSymbolWithoutHash) {
  KernelTuning k{.kernel = "f32_softmax"};
  EXPECT_EQ(KernelLabel(k), "f32_softmax");
  k.symbol = "f32_softmax_u4x8_avx2_3f0c1a2b";  // 8 digits: not a kernel symbol's hash
  EXPECT_EQ(KernelLabel(k), "f32_softmax_u4x8_avx2_3f0c1a2b");
  k.symbol = "f32_softmax_u4x8_avx2_3f0c1a2b4d5e6f7g";  // 'g' is no hex digit
  EXPECT_EQ(KernelLabel(k), k.symbol);
  k.symbol = "3f0c1a2b4d5e6f70";
  EXPECT_EQ(KernelLabel(k), k.symbol);
}

TEST(ResultOfTest, NamesTheKernelByItsLabel) {
  KernelTuning k{.function = "block",
                 .shape_class = "in0.0=[8..15]",
                 .kernel = "f32_matmul_add",
                 .symbol = "f32_matmul_add_6x16_avx2_3f0c1a2b4d5e6f70",
                 .trials = 3,
                 .default_seconds = 2e-6,
                 .best_seconds = 1e-6,
                 .curve = {2e-6, 1e-6}};
  const KernelTuningResult r = ResultOf(k);
  EXPECT_EQ(r.kernel, "f32_matmul_add_6x16_avx2_3f0c1a2b");
  EXPECT_EQ(r.function, "block");
  // A resumed kernel: its 2 points are its last 2 trials.
  EXPECT_THAT(r.curve, ElementsAre(std::pair<int64_t, double>{2, 2e-6},
                                   std::pair<int64_t, double>{3, 1e-6}));
}

}  // namespace
}  // namespace pto::tools
