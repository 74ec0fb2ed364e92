#include "tools/bench/config_sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "device/device_info.h"
#include "device/thread_arena.h"
#include "jit/codegen/matmul_config_grid.h"
#include "jit/kernel_compiler.h"
#include "jit/pipeline.h"
#include "jit/shape_class.h"
#include "jit/trace.h"
#include "pto/pto.h"

namespace pto::bench {
namespace {

std::string ConfigText(const ir::TileConfig& c) {
  return absl::StrCat("mr=", c.mr, ",nr_vectors=", c.nr_vectors, ",unroll=", c.unroll, ",kc=", c.kc,
                      ",pack_b=", c.pack_b ? 1 : 0, ",panel_bytes=", c.panel_bytes,
                      ",loop_order=", ir::LoopOrderName(c.loop_order), ",mc=", c.mc,
                      ",prefetch_b=", c.prefetch_b, ",tile_rows=", c.tile_rows,
                      ",tile_cols=", c.tile_cols);
}

// One --sweep-configs entry ("mr=12,nr_vectors=2") applied over `config`.
absl::Status ApplyFields(absl::string_view text, ir::TileConfig& config) {
  for (absl::string_view field : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    const std::vector<absl::string_view> kv = absl::StrSplit(field, '=');
    int64_t v = 0;
    if (kv.size() == 2 && kv[0] == "loop_order") {
      if (kv[1] == "panels_outer") {
        config.loop_order = ir::LoopOrder::kPanelsOuter;
      } else if (kv[1] == "row_blocks_outer") {
        config.loop_order = ir::LoopOrder::kRowBlocksOuter;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("loop_order is panels_outer or row_blocks_outer, not '", kv[1], "'"));
      }
      continue;
    }
    if (kv.size() != 2 || !absl::SimpleAtoi(kv[1], &v) || v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", field, "' is not name=value with a value of at least 0"));
    }
    if (kv[0] == "mr") {
      config.mr = static_cast<int>(v);
    } else if (kv[0] == "nr_vectors") {
      config.nr_vectors = static_cast<int>(v);
    } else if (kv[0] == "unroll") {
      config.unroll = static_cast<int>(v);
    } else if (kv[0] == "kc") {
      config.kc = v;
    } else if (kv[0] == "pack_b") {
      config.pack_b = v != 0;
    } else if (kv[0] == "panel_bytes") {
      config.panel_bytes = v;
    } else if (kv[0] == "mc") {
      config.mc = v;
    } else if (kv[0] == "prefetch_b") {
      config.prefetch_b = v;
    } else if (kv[0] == "tile_rows") {
      config.tile_rows = v;
    } else if (kv[0] == "tile_cols") {
      config.tile_cols = v;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("no config field '", kv[0], "'"));
    }
  }
  return absl::OkStatus();
}

// A prepacked B's layout follows the kernel's micro-tile width: after changing the config, the
// packed buffer takes blocks of nr_vectors x vector width columns (false: none fits N).
bool RepackFor(jit::LoweredProgram& program, int call, int lanes) {
  ir::Kernel& k = program.tiles.calls[call].kernel;
  if (k.b_packed < 0) return true;
  ir::Buffer& buffer = program.tiles.buffers[program.tiles.calls[call].buffers[k.b_packed]];
  ir::PackedB& pack = buffer.pack;
  pack.block = ir::MatMulColumnBlock(k.config, lanes);
  if (pack.n < pack.block) return false;
  buffer.elements = ir::SymExpr(pack.elements());
  k.b_packed_block = pack.block;
  return true;
}

struct Row {
  ir::TileConfig config;
  bool is_default = false;
  double seconds = 0;  // median per call; 0 when it failed
  std::string failure;
};

}  // namespace

int RunConfigSweep(const SweepOptions& o) {
  const device::DeviceInfo device = device::DetectHost();
  absl::StatusOr<std::unique_ptr<jit::KernelCompiler>> compiler =
      jit::KernelCompiler::Create(device);
  if (!compiler.ok()) {
    std::fprintf(stderr, "sweep: %s\n", compiler.status().ToString().c_str());
    return 1;
  }
  const bool tb = o.transposed_b;
  const TraceFn trace = [tb](std::span<const Value> v) {
    return std::vector<Value>{tb ? matmul(v[0], transpose(v[1], 0, 1)) : matmul(v[0], v[1])};
  };
  const std::vector<jit::TraceInput> inputs = {{{o.m, o.k}},
                                               {tb ? ir::Shape{o.n, o.k} : ir::Shape{o.k, o.n}}};
  absl::StatusOr<ir::Graph> graph = jit::Trace(trace, inputs, {});
  jit::PipelineOptions pipeline;
  pipeline.device = &device;
  pipeline.constant_inputs = {false, o.constant_b};
  absl::StatusOr<jit::LoweredProgram> lowered =
      graph.ok() ? jit::Lower(*graph, jit::ShapeClass{}, pipeline)
                 : absl::StatusOr<jit::LoweredProgram>(graph.status());
  if (!lowered.ok()) {
    std::fprintf(stderr, "sweep: %s\n", lowered.status().ToString().c_str());
    return 1;
  }
  int call = -1;
  for (size_t c = 0; c < lowered->tiles.calls.size(); ++c) {
    if (lowered->tiles.calls[c].kernel.kind == ir::KernelKind::kMatMul) call = static_cast<int>(c);
  }
  if (call < 0 || lowered->tiles.calls.size() != 1) {
    std::fprintf(stderr, "sweep: the program did not lower to one matmul kernel\n");
    return 1;
  }
  const ir::TileConfig default_config = lowered->tiles.calls[call].kernel.config;

  // Operand sets, rotated so the timing is not flattered by caches, and the reference.
  const int64_t set_bytes = (o.m * o.k + o.k * o.n + o.m * o.n) * 4;
  const int sets =
      static_cast<int>(std::clamp<int64_t>(2 * device.l3_bytes / set_bytes + 1, 1, 64));
  std::mt19937 rng(o.seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<std::vector<float>> a(sets), b(sets), c(sets);
  for (int s = 0; s < sets; ++s) {
    a[s].resize(o.m * o.k);
    b[s].resize(o.k * o.n);
    c[s].assign(o.m * o.n, 0.f);
    if (s == 0) {
      for (float& x : a[0]) x = uniform(rng);
      for (float& x : b[0]) x = uniform(rng);
    } else {
      a[s] = a[0];
      b[s] = b[0];
    }
  }
  std::vector<double> want(o.m * o.n, 0.0);
  double want_max = 0;
  for (int64_t i = 0; i < o.m; ++i) {
    for (int64_t l = 0; l < o.k; ++l) {
      const double av = a[0][i * o.k + l];
      for (int64_t j = 0; j < o.n; ++j) {
        want[i * o.n + j] += av * b[0][tb ? j * o.k + l : l * o.n + j];
      }
    }
  }
  for (double w : want) want_max = std::max(want_max, std::abs(w));

  // The configs: the default first, then the grid (or a seeded sample of it), or the given ones.
  const jit::MatMulConfigGrid grid;
  std::vector<Row> rows;
  rows.push_back({default_config, true});
  std::vector<int64_t> picks(o.configs.empty() ? grid.size() : 0);
  for (int64_t i = 0; i < static_cast<int64_t>(picks.size()); ++i) picks[i] = i;
  for (absl::string_view text : absl::StrSplit(o.configs, ';', absl::SkipWhitespace())) {
    ir::TileConfig config = default_config;
    if (absl::Status s = ApplyFields(text, config); !s.ok()) {
      std::fprintf(stderr, "sweep: --sweep-configs: %s\n", std::string(s.message()).c_str());
      return 2;
    }
    rows.push_back({config, false});
  }
  if (o.limit > 0 && o.limit < static_cast<int64_t>(picks.size())) {
    std::shuffle(picks.begin(), picks.end(), rng);
    picks.resize(o.limit);
    std::sort(picks.begin(), picks.end());
  }
  for (int64_t i : picks) {
    ir::TileConfig config = grid.At(i);
    config.tile_rows = default_config.tile_rows;
    config.tile_cols = default_config.tile_cols;
    config.vector_width = default_config.vector_width;
    rows.push_back({config, false});
  }

  std::printf(
      "config sweep: matmul %lldx%lldx%lld (MxKxN)%s%s, %d thread(s), %zu configs (%s), "
      "%d rotated operand sets%s\n",
      static_cast<long long>(o.m), static_cast<long long>(o.k), static_cast<long long>(o.n),
      tb ? " with B stored [N, K]" : "", o.constant_b ? ", B constant (prepacked)" : "", o.threads,
      rows.size() - 1,
      !o.configs.empty() ? "given"
      : o.limit > 0      ? "a seeded sample of the grid"
                         : "the whole grid",
      sets, o.configs.empty() ? "" : ", timed interleaved (round-robin repetitions)");
  device::ThreadArena arena(o.threads);
  const auto start = std::chrono::steady_clock::now();
  int failures = 0;
  // Given configs are timed side by side (TimeInterleaved), so their plans are kept.
  const bool interleave = !o.configs.empty();
  std::vector<std::unique_ptr<jit::Plan>> kept;
  std::vector<std::function<void(int)>> kept_runs;
  std::vector<size_t> kept_rows;
  for (size_t r = 0; r < rows.size(); ++r) {
    Row& row = rows[r];
    jit::LoweredProgram program = *lowered;
    program.tiles.calls[call].kernel.config = row.config;
    absl::StatusOr<jit::BuiltPlan> plan =
        RepackFor(program, call, device.f32_lanes())
            ? jit::BuildPlan(program, **compiler)
            : absl::StatusOr<jit::BuiltPlan>(absl::InvalidArgumentError(
                  "N is narrower than one block of nr_vectors x vector width columns"));
    if (!plan.ok()) {
      row.failure = plan.status().ToString();
    } else {
      jit::Plan* p = plan->plan.get();
      const bool constant_b = o.constant_b;
      auto run = [&a, &b, &c, &arena, p, constant_b](int s) {
        // A constant B is packed once from the first pointer the plan sees: one copy, as in
        // the bench's linears.
        void* in[2] = {a[s].data(), constant_b ? b[0].data() : b[s].data()};
        void* out[1] = {c[s].data()};
        (void)p->Run({}, in, out, &arena);
      };
      std::fill(c[0].begin(), c[0].end(), 0.f);
      run(0);
      double err = 0;
      for (int64_t i = 0; i < o.m * o.n; ++i) err = std::max(err, std::abs(c[0][i] - want[i]));
      if (!(err <= 1e-5 * want_max)) {
        row.failure = absl::StrCat("wrong result: max rel err ", err / want_max);
      } else if (interleave) {
        kept.push_back(std::move(plan->plan));
        kept_runs.push_back(run);
        kept_rows.push_back(r);
      } else {
        row.seconds = TimeCalls(run, sets, o.timing).median;
      }
    }
    if (!row.failure.empty()) ++failures;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "\r[%zu/%zu] %.0f s elapsed, %.0f s left   ", r + 1, rows.size(), elapsed,
                 elapsed / static_cast<double>(r + 1) * static_cast<double>(rows.size() - r - 1));
  }
  if (interleave) {
    const std::vector<Timing> timings = TimeInterleaved(kept_runs, sets, o.timing);
    for (size_t i = 0; i < kept_rows.size(); ++i) rows[kept_rows[i]].seconds = timings[i].median;
  }
  std::fprintf(stderr, "\n");

  const double flops = 2.0 * static_cast<double>(o.m * o.n * o.k);
  const double default_seconds = rows[0].seconds;
  std::vector<const Row*> ok;
  for (const Row& row : rows) {
    if (row.failure.empty()) ok.push_back(&row);
  }
  std::stable_sort(ok.begin(), ok.end(),
                   [](const Row* x, const Row* y) { return x->seconds < y->seconds; });
  auto print = [&](size_t rank, const Row& row) {
    std::printf("%5zu  %8.1f  %6.2fx  %s%s\n", rank + 1, flops / row.seconds / 1e9,
                default_seconds / row.seconds, ConfigText(row.config).c_str(),
                row.is_default ? "  (default)" : "");
  };
  std::printf("%5s  %8s  %7s  %s\n", "rank", "GFLOP/s", "vs def", "config");
  for (size_t i = 0; i < ok.size(); ++i) {
    if (i < 15 || i + 5 >= ok.size() || ok[i]->is_default) print(i, *ok[i]);
    if (i == 15 && ok.size() > 20) std::printf("  ...\n");
  }
  for (const Row& row : rows) {
    if (!row.failure.empty()) {
      std::printf("FAILED %s: %s\n", ConfigText(row.config).c_str(), row.failure.c_str());
    }
  }
  std::printf("%zu configs measured, %d failed; the default config ranks %zu of %zu\n", ok.size(),
              failures,
              static_cast<size_t>(
                  std::find_if(ok.begin(), ok.end(), [](const Row* x) { return x->is_default; }) -
                  ok.begin()) +
                  1,
              ok.size());
  if (!o.csv_path.empty()) {
    std::ofstream csv(o.csv_path);
    csv << "# pto_bench_kernels --sweep: matmul " << o.m << "x" << o.k << "x" << o.n << ", "
        << o.threads << " thread(s), " << device.cpu_name << "\n";
    csv << "mr,nr_vectors,unroll,kc,pack_b,panel_bytes,loop_order,mc,prefetch_b,default,"
           "seconds,gflops,status\n";
    for (const Row& row : rows) {
      const ir::TileConfig& c = row.config;
      csv << c.mr << "," << c.nr_vectors << "," << c.unroll << "," << c.kc << ","
          << (c.pack_b ? 1 : 0) << "," << c.panel_bytes << "," << ir::LoopOrderName(c.loop_order)
          << "," << c.mc << "," << c.prefetch_b << "," << (row.is_default ? 1 : 0) << ","
          << row.seconds << "," << (row.seconds > 0 ? flops / row.seconds / 1e9 : 0) << ","
          << (row.failure.empty() ? "ok" : "failed") << "\n";
    }
    if (!csv) {
      std::fprintf(stderr, "sweep: cannot write %s\n", o.csv_path.c_str());
      return 1;
    }
    std::printf("table written to %s\n", o.csv_path.c_str());
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace pto::bench
