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
#include "jit/tuning/space_builders.h"
#include "pto/pto.h"

namespace pto::bench {
namespace {

std::string ConfigText(const ir::TileConfig& c) {
  return absl::StrCat("mr=", c.mr, ",nr_vectors=", c.nr_vectors, ",unroll=", c.unroll, ",kc=", c.kc,
                      ",pack_b=", c.pack_b ? 1 : 0, ",pack_prefetch_rows=", c.pack_prefetch_rows,
                      ",panel_bytes=", c.panel_bytes,
                      ",loop_order=", ir::LoopOrderName(c.loop_order), ",mc=", c.mc,
                      ",prefetch_b=", c.prefetch_b, ",prefetch_output=", c.prefetch_output ? 1 : 0,
                      ",narrow_tail=", c.narrow_tail ? 1 : 0, ",tile_rows=", c.tile_rows,
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
    const jit::tuning::TileConfigField* f =
        jit::tuning::FindTileConfigField(std::string_view(kv[0].data(), kv[0].size()));
    if (f == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("no config field '", kv[0], "'"));
    }
    f->set(config, v);
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

// The swept program: the traced matmul lowered once, and which of its calls is the matmul.
struct SweepProgram {
  jit::LoweredProgram lowered;
  int call = -1;
};

// Operand sets, rotated so the timing is not flattered by caches, and the reference.
struct Operands {
  int sets = 0;
  std::vector<std::vector<float>> a, b, c;  // every set holds the same values
  std::vector<double> want;                 // a[0] x b[0] in double precision
  double want_max = 0;
};

absl::StatusOr<jit::LoweredProgram> LowerMatMul(const SweepOptions& o,
                                                const device::DeviceInfo& device) {
  const bool ta = o.transposed_a, tb = o.transposed_b;
  const TraceFn trace = [ta, tb](std::span<const Value> v) {
    return std::vector<Value>{
        matmul(ta ? transpose(v[0], 0, 1) : v[0], tb ? transpose(v[1], 0, 1) : v[1])};
  };
  const std::vector<jit::TraceInput> inputs = {{ta ? ir::Shape{o.k, o.m} : ir::Shape{o.m, o.k}},
                                               {tb ? ir::Shape{o.n, o.k} : ir::Shape{o.k, o.n}}};
  absl::StatusOr<ir::Graph> graph = jit::Trace(trace, inputs, {});
  jit::PipelineOptions pipeline;
  pipeline.device = &device;
  pipeline.constant_inputs = {false, o.constant_b};
  return graph.ok() ? jit::Lower(*graph, jit::ShapeClass{}, pipeline)
                    : absl::StatusOr<jit::LoweredProgram>(graph.status());
}

// The call of the program's one matmul kernel; -1 when it has none or several. The program
// may copy an operand first (A read across K is copied to rows): the sweep times it whole.
int SoleMatMulCall(const jit::LoweredProgram& lowered) {
  int call = -1, matmuls = 0;
  for (size_t c = 0; c < lowered.tiles.calls.size(); ++c) {
    if (lowered.tiles.calls[c].kernel.kind != ir::KernelKind::kMatMul) continue;
    call = static_cast<int>(c);
    ++matmuls;
  }
  return matmuls == 1 ? call : -1;
}

Operands MakeOperands(const SweepOptions& o, const device::DeviceInfo& device, std::mt19937& rng) {
  Operands ops;
  const int64_t set_bytes = (o.m * o.k + o.k * o.n + o.m * o.n) * 4;
  ops.sets =
      o.sets > 0
          ? o.sets
          : static_cast<int>(std::clamp<int64_t>(2 * device.l3_bytes / set_bytes + 1, 1, 64));
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  ops.a.resize(ops.sets);
  ops.b.resize(ops.sets);
  ops.c.resize(ops.sets);
  for (int s = 0; s < ops.sets; ++s) {
    ops.a[s].resize(o.m * o.k);
    ops.b[s].resize(o.k * o.n);
    ops.c[s].assign(o.m * o.n, 0.f);
    if (s == 0) {
      for (float& x : ops.a[0]) x = uniform(rng);
      for (float& x : ops.b[0]) x = uniform(rng);
    } else {
      ops.a[s] = ops.a[0];
      ops.b[s] = ops.b[0];
    }
  }
  return ops;
}

void ComputeReference(const SweepOptions& o, Operands& ops) {
  ops.want.assign(o.m * o.n, 0.0);
  ops.want_max = 0;
  for (int64_t i = 0; i < o.m; ++i) {
    for (int64_t l = 0; l < o.k; ++l) {
      const double av = ops.a[0][o.transposed_a ? l * o.m + i : i * o.k + l];
      for (int64_t j = 0; j < o.n; ++j) {
        ops.want[i * o.n + j] += av * ops.b[0][o.transposed_b ? j * o.k + l : l * o.n + j];
      }
    }
  }
  for (double w : ops.want) ops.want_max = std::max(ops.want_max, std::abs(w));
}

// The configs: the default first, then the grid (or a seeded sample of it), or the given ones.
absl::StatusOr<std::vector<Row>> ConfigsToSweep(const SweepOptions& o,
                                                const ir::TileConfig& default_config,
                                                std::mt19937& rng) {
  const jit::MatMulConfigGrid grid;
  std::vector<Row> rows;
  rows.push_back({default_config, true});
  std::vector<int64_t> picks(o.configs.empty() ? grid.size() : 0);
  for (int64_t i = 0; i < static_cast<int64_t>(picks.size()); ++i) picks[i] = i;
  for (absl::string_view text : absl::StrSplit(o.configs, ';', absl::SkipWhitespace())) {
    ir::TileConfig config = default_config;
    if (absl::Status s = ApplyFields(text, config); !s.ok()) return s;
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
  return rows;
}

void PrintHeader(const SweepOptions& o, size_t configs, int sets) {
  std::printf(
      "config sweep: matmul %lldx%lldx%lld (MxKxN)%s%s%s, %d thread(s), %zu configs (%s), "
      "%d rotated operand sets%s\n",
      static_cast<long long>(o.m), static_cast<long long>(o.k), static_cast<long long>(o.n),
      o.transposed_a ? " with A stored [K, M]" : "", o.transposed_b ? " with B stored [N, K]" : "",
      o.constant_b ? ", B constant (prepacked)" : "", o.threads, configs,
      !o.configs.empty() ? "given"
      : o.limit > 0      ? "a seeded sample of the grid"
                         : "the whole grid",
      sets, o.configs.empty() ? "" : ", timed interleaved (round-robin repetitions)");
}

// The program with the matmul kernel's config replaced, compiled into a plan.
absl::StatusOr<std::unique_ptr<jit::Plan>> PlanWithConfig(const SweepProgram& swept,
                                                          const ir::TileConfig& config,
                                                          jit::KernelCompiler& compiler,
                                                          int lanes) {
  jit::LoweredProgram program = swept.lowered;
  program.tiles.calls[swept.call].kernel.config = config;
  if (!RepackFor(program, swept.call, lanes)) {
    return absl::InvalidArgumentError(
        "N is narrower than one block of nr_vectors x vector width columns");
  }
  absl::StatusOr<jit::BuiltPlan> built = jit::BuildPlan(program, compiler);
  if (!built.ok()) return built.status();
  return std::move(built->plan);
}

// One call of the plan on operand set `s`.
auto RunOnSet(jit::Plan* p, Operands& ops, device::ThreadArena& arena, bool constant_b) {
  return [&a = ops.a, &b = ops.b, &c = ops.c, &arena, p, constant_b](int s) {
    // A constant B is packed once from the first pointer the plan sees: one copy, as in the
    // bench's linears.
    void* in[2] = {a[s].data(), constant_b ? b[0].data() : b[s].data()};
    void* out[1] = {c[s].data()};
    (void)p->Run({}, in, out, &arena);
  };
}

// Runs the plan once on the first operand set; the failure text when its result is wrong.
std::string CheckResult(const std::function<void(int)>& run, const SweepOptions& o, Operands& ops) {
  std::fill(ops.c[0].begin(), ops.c[0].end(), 0.f);
  run(0);
  double err = 0;
  for (int64_t i = 0; i < o.m * o.n; ++i) {
    err = std::max(err, std::abs(ops.c[0][i] - ops.want[i]));
  }
  if (!(err <= 1e-5 * ops.want_max)) {
    return absl::StrCat("wrong result: max rel err ", err / ops.want_max);
  }
  return "";
}

void PrintProgress(size_t done, size_t total, std::chrono::steady_clock::time_point start) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "\r[%zu/%zu] %.0f s elapsed, %.0f s left   ", done, total, elapsed,
               elapsed / static_cast<double>(done) * static_cast<double>(total - done));
}

// Compiles, checks and times every row's config: fills in its seconds or its failure, and
// returns how many failed. Given configs are timed side by side (TimeInterleaved) after all
// are compiled, so their plans are kept until then; grid configs are timed one by one.
int MeasureRows(const SweepOptions& o, const SweepProgram& swept, jit::KernelCompiler& compiler,
                int lanes, Operands& ops, device::ThreadArena& arena, std::vector<Row>& rows) {
  const auto start = std::chrono::steady_clock::now();
  int failures = 0;
  const bool interleave = !o.configs.empty();
  std::vector<std::unique_ptr<jit::Plan>> kept;
  std::vector<std::function<void(int)>> kept_runs;
  std::vector<size_t> kept_rows;
  for (size_t r = 0; r < rows.size(); ++r) {
    Row& row = rows[r];
    absl::StatusOr<std::unique_ptr<jit::Plan>> plan =
        PlanWithConfig(swept, row.config, compiler, lanes);
    if (!plan.ok()) {
      row.failure = plan.status().ToString();
    } else {
      const auto run = RunOnSet(plan->get(), ops, arena, o.constant_b);
      if (row.failure = CheckResult(run, o, ops); row.failure.empty()) {
        if (interleave) {
          kept.push_back(std::move(*plan));
          kept_runs.push_back(run);
          kept_rows.push_back(r);
        } else {
          row.seconds = TimeCalls(run, ops.sets, o.timing).median;
        }
      }
    }
    if (!row.failure.empty()) ++failures;
    PrintProgress(r + 1, rows.size(), start);
  }
  if (interleave) {
    const std::vector<Timing> timings = TimeInterleaved(kept_runs, ops.sets, o.timing);
    for (size_t i = 0; i < kept_rows.size(); ++i) rows[kept_rows[i]].seconds = timings[i].median;
  }
  std::fprintf(stderr, "\n");
  return failures;
}

// The measured configs fastest first (the first 15, the last 5 and the default), then the
// failures and where the default ranks.
void PrintRanking(const SweepOptions& o, const std::vector<Row>& rows, int failures) {
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
}

// --sweep-csv: one row per config; false when the file cannot be written.
bool WriteCsv(const SweepOptions& o, const device::DeviceInfo& device,
              const std::vector<Row>& rows) {
  const double flops = 2.0 * static_cast<double>(o.m * o.n * o.k);
  std::ofstream csv(o.csv_path);
  csv << "# pto_bench_kernels --sweep: matmul " << o.m << "x" << o.k << "x" << o.n << ", "
      << o.threads << " thread(s), " << device.cpu_name << "\n";
  csv << "mr,nr_vectors,unroll,kc,pack_b,pack_prefetch_rows,panel_bytes,loop_order,mc,prefetch_b,"
         "prefetch_output,narrow_tail,"
         "default,"
         "seconds,gflops,status\n";
  for (const Row& row : rows) {
    const ir::TileConfig& c = row.config;
    csv << c.mr << "," << c.nr_vectors << "," << c.unroll << "," << c.kc << ","
        << (c.pack_b ? 1 : 0) << "," << c.pack_prefetch_rows << "," << c.panel_bytes << ","
        << ir::LoopOrderName(c.loop_order) << "," << c.mc << "," << c.prefetch_b << ","
        << (c.prefetch_output ? 1 : 0) << "," << (c.narrow_tail ? 1 : 0) << ","
        << (row.is_default ? 1 : 0) << "," << row.seconds << ","
        << (row.seconds > 0 ? flops / row.seconds / 1e9 : 0) << ","
        << (row.failure.empty() ? "ok" : "failed") << "\n";
  }
  if (!csv) {
    std::fprintf(stderr, "sweep: cannot write %s\n", o.csv_path.c_str());
    return false;
  }
  std::printf("table written to %s\n", o.csv_path.c_str());
  return true;
}

}  // namespace

int RunConfigSweep(const SweepOptions& o) {
  const device::DeviceInfo device = device::DetectHost();
  absl::StatusOr<std::unique_ptr<jit::KernelCompiler>> compiler =
      jit::KernelCompiler::Create(device);
  if (!compiler.ok()) {
    std::fprintf(stderr, "sweep: %s\n", compiler.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<jit::LoweredProgram> lowered = LowerMatMul(o, device);
  if (!lowered.ok()) {
    std::fprintf(stderr, "sweep: %s\n", lowered.status().ToString().c_str());
    return 1;
  }
  const int call = SoleMatMulCall(*lowered);
  if (call < 0) {
    std::fprintf(stderr, "sweep: the program did not lower to one matmul kernel\n");
    return 1;
  }
  const SweepProgram swept{*std::move(lowered), call};
  std::mt19937 rng(o.seed);
  Operands ops = MakeOperands(o, device, rng);
  ComputeReference(o, ops);
  absl::StatusOr<std::vector<Row>> rows =
      ConfigsToSweep(o, swept.lowered.tiles.calls[swept.call].kernel.config, rng);
  if (!rows.ok()) {
    std::fprintf(stderr, "sweep: --sweep-configs: %s\n",
                 std::string(rows.status().message()).c_str());
    return 2;
  }
  PrintHeader(o, rows->size() - 1, ops.sets);
  device::ThreadArena arena(o.threads);
  const int failures = MeasureRows(o, swept, **compiler, device.f32_lanes(), ops, arena, *rows);
  PrintRanking(o, *rows, failures);
  if (!o.csv_path.empty() && !WriteCsv(o, device, *rows)) return 1;
  return failures == 0 ? 0 : 1;
}

}  // namespace pto::bench
