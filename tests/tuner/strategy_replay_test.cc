// Strategy evaluation: a matmul config table measured once with
// `pto_bench_kernels --sweep` (tests/data/tuner/, its first lines say how) is replayed offline:
// the objective returns the table's time for a config, so strategies can be compared over many
// seeds in milliseconds. The evolutionary strategy must beat random search at equal budget (mean
// best found over 20 seeds) and reach within 5% of the table's best with at most a quarter of
// the space's trials in at least 18 of the 20 seeds; exhaustive search must find the best.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "tuner/search_loop.h"
#include "tuner/search_space.h"
#include "tuner/strategy.h"

namespace pto::tuner {
namespace {

const std::string kTable =
    std::string(PTO_SOURCE_DIR) + "/tests/data/tuner/matmul_sweep_128x256x256.csv";

constexpr int kSeeds = 20;
constexpr double kWithin = 1.05;  // "within 5% of the table's best"

// The table's parameters, in space order. Packing and loop order are indices of the grid's
// (pack_b, panel_bytes) and (loop_order, mc) pairs (jit/codegen/matmul_config_grid.h).
constexpr const char* kParameterNames[] = {"mr", "nr_vectors", "unroll", "kc", "packing", "order"};
constexpr int kNumParameters = 6;

struct Row {
  Config config;
  bool is_default = false;
  bool ok = false;
  double seconds = 0;
};

struct Table {
  std::vector<Row> rows;  // the grid's configs (the default row excluded)
  std::optional<Row> default_row;
};

// Index of (pack_b, panel_bytes) in the grid's packing pairs: none, panels, packed panels.
absl::StatusOr<int64_t> PackingIndex(int64_t pack_b, int64_t panel_bytes) {
  if (pack_b == 0 && panel_bytes == 0) return 0;
  if (pack_b == 0 && panel_bytes > 0) return 1;
  if (pack_b == 1 && panel_bytes > 0) return 2;
  return absl::InvalidArgumentError(absl::StrCat("packing ", pack_b, "/", panel_bytes));
}

absl::StatusOr<Table> LoadTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  Table table;
  std::string line;
  bool header = false;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, ',');
    if (!header) {
      if (f.size() != 12 || f[0] != "mr" || f[9] != "seconds" || f[11] != "status") {
        return absl::InvalidArgumentError(absl::StrCat(path, ": unexpected header: ", line));
      }
      header = true;
      continue;
    }
    auto bad = [&] {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", line_number, ": ", line));
    };
    if (f.size() != 12) return bad();
    int64_t v[6];  // mr, nr_vectors, unroll, kc, pack_b, panel_bytes
    for (int i = 0; i < 6; ++i) {
      if (!absl::SimpleAtoi(f[i], &v[i])) return bad();
    }
    int64_t order;
    if (f[6] == "panels_outer") {
      order = 0;
    } else if (f[6] == "row_blocks_outer") {
      order = 1;
    } else {
      return bad();
    }
    absl::StatusOr<int64_t> packing = PackingIndex(v[4], v[5]);
    if (!packing.ok()) return bad();
    Row row;
    row.config = {v[0], v[1], v[2], v[3], *packing, order};
    row.is_default = f[8] == "1";
    row.ok = f[11] == "ok";
    if (!absl::SimpleAtod(f[9], &row.seconds)) return bad();
    if (row.ok && !(row.seconds > 0)) return bad();
    if (row.is_default) {
      table.default_row = row;
    } else {
      table.rows.push_back(row);
    }
  }
  if (!header) return absl::InvalidArgumentError(absl::StrCat(path, ": no header"));
  return table;
}

// The replayed objective: a space over the table's parameter values (admitting only measured
// configs when the table is a sample of the grid) and the time of each config.
struct Replay {
  Table table;
  std::optional<SearchSpace> space;
  absl::flat_hash_map<int64_t, const Row*> by_code;  // space code -> row
  double best_seconds = std::numeric_limits<double>::infinity();
  int64_t failed = 0;

  absl::StatusOr<double> Evaluate(const Config& config) const {
    auto it = by_code.find(space->Code(config));
    if (it == by_code.end()) return absl::NotFoundError("not in the table");
    if (!it->second->ok) return absl::InternalError("failed in the sweep");
    return it->second->seconds;
  }
};

// keep_every > 1 keeps only every keep_every-th row: a sample of the grid, as a table measured
// with --sweep-limit would be.
std::unique_ptr<Replay> MakeReplay(int keep_every = 1) {
  auto replay = std::make_unique<Replay>();
  absl::StatusOr<Table> table = LoadTable(kTable);
  EXPECT_TRUE(table.ok()) << table.status();
  if (!table.ok()) return nullptr;
  replay->table = *std::move(table);
  if (keep_every > 1) {
    std::vector<Row> kept;
    for (size_t i = 0; i < replay->table.rows.size(); i += keep_every) {
      kept.push_back(replay->table.rows[i]);
    }
    replay->table.rows = std::move(kept);
  }
  SearchSpaceSpec spec;
  spec.kind = "matmul (replayed table)";
  for (int p = 0; p < kNumParameters; ++p) {
    std::vector<int64_t> values;
    for (const Row& row : replay->table.rows) values.push_back(row.config[p]);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    spec.parameters.push_back({kParameterNames[p], std::move(values)});
  }
  int64_t full = 1;
  for (const Parameter& p : spec.parameters) full *= static_cast<int64_t>(p.values.size());
  // Measured configs, by their values (shared with the constraint's predicate).
  auto measured = std::make_shared<std::set<Config>>();
  for (const Row& row : replay->table.rows) measured->insert(row.config);
  EXPECT_EQ(measured->size(), replay->table.rows.size()) << "the table repeats a config";
  if (static_cast<int64_t>(measured->size()) < full) {
    std::vector<std::string> names(std::begin(kParameterNames), std::end(kParameterNames));
    spec.constraints.push_back({"measured", "only configs in the measured table are replayed",
                                names, [measured](std::span<const int64_t> values) {
                                  return measured->contains(Config(values.begin(), values.end()));
                                }});
  }
  if (replay->table.default_row.has_value() &&
      measured->contains(replay->table.default_row->config)) {
    spec.default_config = replay->table.default_row->config;
  }
  absl::StatusOr<SearchSpace> space = SearchSpace::Create(std::move(spec));
  EXPECT_TRUE(space.ok()) << space.status();
  if (!space.ok()) return nullptr;
  replay->space.emplace(*std::move(space));
  for (const Row& row : replay->table.rows) {
    replay->by_code[replay->space->Code(row.config)] = &row;
    if (row.ok) {
      replay->best_seconds = std::min(replay->best_seconds, row.seconds);
    } else {
      ++replay->failed;
    }
  }
  return replay;
}

struct Outcome {
  double best = std::numeric_limits<double>::infinity();
  int64_t trials = 0;
  int64_t trials_to_within = -1;   // 1-based trial that first came within 5%; -1: never
  std::vector<double> best_after;  // best_after[i]: the best time of trials 1..i+1
};

Outcome Replayed(StrategyKind kind, const Replay& replay, int64_t max_trials, uint64_t seed) {
  std::unique_ptr<SearchStrategy> strategy = MakeStrategy(kind);
  Budget budget;
  budget.max_trials = max_trials;
  SearchResult result = RunSearch(*strategy, *replay.space, budget, seed,
                                  [&](const Config& c) { return replay.Evaluate(c); });
  Outcome out;
  out.trials = static_cast<int64_t>(result.trials.size());
  for (size_t i = 0; i < result.trials.size(); ++i) {
    const absl::StatusOr<double>& s = result.trials[i].seconds;
    if (s.ok()) out.best = std::min(out.best, *s);
    out.best_after.push_back(out.best);
    if (!s.ok()) continue;
    if (out.trials_to_within < 0 && *s <= kWithin * replay.best_seconds) {
      out.trials_to_within = static_cast<int64_t>(i) + 1;
    }
  }
  if (result.best.has_value()) {
    EXPECT_EQ(*result.best->seconds, out.best) << StrategyName(kind) << " seed " << seed;
  }
  return out;
}

struct Summary {
  double mean_best = 0;
  int within = 0;                    // seeds that came within 5%
  double mean_trials_to_within = 0;  // over those seeds
  double worst_best = 0;
  int64_t max_trials_to_within = 0;  // over the seeds that came within 5%
};

Summary Summarize(const std::vector<Outcome>& outcomes, int64_t budget) {
  Summary s;
  int64_t trials_sum = 0;
  for (const Outcome& o : outcomes) {
    s.mean_best += o.best;
    s.worst_best = std::max(s.worst_best, o.best);
    if (o.trials_to_within > 0 && o.trials_to_within <= budget) {
      ++s.within;
      trials_sum += o.trials_to_within;
      s.max_trials_to_within = std::max(s.max_trials_to_within, o.trials_to_within);
    }
  }
  s.mean_best /= static_cast<double>(outcomes.size());
  s.mean_trials_to_within = s.within > 0 ? static_cast<double>(trials_sum) / s.within : 0;
  return s;
}

TEST(StrategyReplayTest, TableIsBigEnoughAndSpread) {
  std::unique_ptr<Replay> replay = MakeReplay();
  ASSERT_NE(replay, nullptr);
  const SearchSpace& space = *replay->space;
  EXPECT_GE(space.size(), 200);
  EXPECT_EQ(space.size(), static_cast<int64_t>(replay->table.rows.size()));
  double worst = 0;
  for (const Row& row : replay->table.rows) {
    if (row.ok) worst = std::max(worst, row.seconds);
  }
  std::printf("table: %lld configs (%lld failed), best %.3g s, worst %.3g s (%.1fx)",
              static_cast<long long>(space.size()), static_cast<long long>(replay->failed),
              replay->best_seconds, worst, worst / replay->best_seconds);
  if (replay->table.default_row.has_value() && replay->table.default_row->ok) {
    std::printf(", default %.3g s (%.2fx the best)", replay->table.default_row->seconds,
                replay->table.default_row->seconds / replay->best_seconds);
  }
  std::printf("\n");
  // A table whose configs all run alike cannot tell strategies apart.
  EXPECT_GE(worst / replay->best_seconds, 3.0);
}

TEST(StrategyReplayTest, ExhaustiveFindsTheTablesBest) {
  std::unique_ptr<Replay> replay = MakeReplay();
  ASSERT_NE(replay, nullptr);
  Outcome o = Replayed(StrategyKind::kExhaustive, *replay, 0, 0);
  EXPECT_EQ(o.trials, replay->space->size());
  EXPECT_EQ(o.best, replay->best_seconds);
}

// A sampled table: the "measured" constraint keeps every proposal inside the table.
TEST(StrategyReplayTest, SampledTableAdmitsOnlyMeasuredConfigs) {
  std::unique_ptr<Replay> replay = MakeReplay(/*keep_every=*/5);
  ASSERT_NE(replay, nullptr);
  const SearchSpace& space = *replay->space;
  EXPECT_EQ(space.size(), static_cast<int64_t>(replay->table.rows.size()));
  EXPECT_LT(space.size(), space.full_size());
  for (StrategyKind kind : {StrategyKind::kRandom, StrategyKind::kEvolutionary}) {
    std::unique_ptr<SearchStrategy> strategy = MakeStrategy(kind);
    Budget budget;
    budget.max_trials = space.size() / 2;
    SearchResult result = RunSearch(*strategy, space, budget, 7,
                                    [&](const Config& c) { return replay->Evaluate(c); });
    EXPECT_EQ(static_cast<int64_t>(result.trials.size()), budget.max_trials);
    for (const Measurement& m : result.trials) {
      EXPECT_TRUE(m.seconds.ok()) << StrategyName(kind) << " " << space.ToString(m.config) << ": "
                                  << m.seconds.status();
    }
  }
}

TEST(StrategyReplayTest, EvolutionaryBeatsRandomAndReachesWithinFivePercentInAQuarter) {
  std::unique_ptr<Replay> replay = MakeReplay();
  ASSERT_NE(replay, nullptr);
  const int64_t budget = replay->space->size() / 4;
  std::map<StrategyKind, std::vector<Outcome>> outcomes;
  for (StrategyKind kind : {StrategyKind::kRandom, StrategyKind::kEvolutionary}) {
    for (int seed = 1; seed <= kSeeds; ++seed) {
      outcomes[kind].push_back(Replayed(kind, *replay, budget, static_cast<uint64_t>(seed)));
      EXPECT_EQ(outcomes[kind].back().trials, budget) << StrategyName(kind) << " seed " << seed;
    }
  }
  const Summary random = Summarize(outcomes[StrategyKind::kRandom], budget);
  const Summary evo = Summarize(outcomes[StrategyKind::kEvolutionary], budget);
  std::printf("replay: %lld configs, table best %.4g s, budget %lld trials, %d seeds\n",
              static_cast<long long>(replay->space->size()), replay->best_seconds,
              static_cast<long long>(budget), kSeeds);
  std::printf("%-13s %12s %8s %11s %12s %12s %11s\n", "strategy", "mean best s", "vs best",
              "worst seed", "seeds <= 5%", "mean trials", "max trials");
  const std::pair<const char*, const Summary*> rows[] = {{"random", &random},
                                                         {"evolutionary", &evo}};
  for (const auto& [name, s] : rows) {
    std::printf("%-13s %12.4g %7.3fx %10.3fx %9d/%d %12.1f %11lld\n", name, s->mean_best,
                s->mean_best / replay->best_seconds, s->worst_best / replay->best_seconds,
                s->within, kSeeds, s->mean_trials_to_within,
                static_cast<long long>(s->max_trials_to_within));
  }
  std::printf("(trials to come within 5%%: mean and max over the seeds that did)\n");
  // The same runs cut short: mean best (relative to the table's best) after fewer trials.
  std::printf("%-13s", "mean best at");
  const int64_t cuts[] = {budget / 8, budget / 4, budget / 2, budget};
  for (int64_t cut : cuts) std::printf(" %6lld trials", static_cast<long long>(cut));
  std::printf("\n");
  for (StrategyKind kind : {StrategyKind::kRandom, StrategyKind::kEvolutionary}) {
    std::printf("%-13s", StrategyName(kind));
    for (int64_t cut : cuts) {
      double mean = 0;
      for (const Outcome& o : outcomes[kind]) mean += o.best_after[cut - 1];
      std::printf(" %12.3fx", mean / kSeeds / replay->best_seconds);
    }
    std::printf("\n");
  }
  EXPECT_LT(evo.mean_best, random.mean_best)
      << "evolutionary mean best " << evo.mean_best << " s, random " << random.mean_best
      << " s, at " << budget << " trials";
  EXPECT_GE(evo.within, 18) << "evolutionary came within 5% of the table's best ("
                            << replay->best_seconds << " s) in " << evo.within << " of " << kSeeds
                            << " seeds with " << budget << " trials (mean trials "
                            << evo.mean_trials_to_within << ")";
}

}  // namespace
}  // namespace pto::tuner
