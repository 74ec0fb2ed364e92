// Search spaces of real kernels (programs lowered for the host, a forced AVX2 and SSE2, and a
// hand-made AVX-512 machine): the default is in the space and round-trips, every config keeps
// the machine's rules (checked here independently of the space's constraints), the rules prune,
// the kind-wide space accepts every kernel space's configs and rejects the rest with reasons,
// and seeded samples compile through the real compiler and give right answers.
#include "jit/tuning/kernel_space.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "device/device_info.h"
#include "device/thread_arena.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/kernel_compiler.h"
#include "jit/pipeline.h"
#include "jit/shape_class.h"
#include "jit/trace.h"
#include "tests/jit/e2e/test_util.h"
#include "tuner/rng.h"
#include "tuner/search_space.h"
#include "tuner/space_rules.h"

namespace pto::jit {
namespace {

using ::testing::HasSubstr;

struct NamedDevice {
  std::string name;
  device::DeviceInfo info;
};

// An AVX-512 server core, whatever the host is (spaces need no code generation).
device::DeviceInfo Avx512Device() {
  device::DeviceInfo d = device::DetectHost();
  d.vendor = "GenuineIntel";
  d.cpu_name = "skylake-avx512";
  d.isa = device::Isa::kAvx512;
  d.has_fma = true;
  d.vector_bits = 512;
  d.vector_registers = 32;
  d.l1d_bytes = 32 << 10;
  d.l2_bytes = 1 << 20;
  d.l3_bytes = 32 << 20;
  d.cores = 16;
  return d;
}

std::vector<NamedDevice> Devices() {
  const device::DeviceInfo host = device::DetectHost();
  return {{"host", host},
          {"avx2", device::RestrictIsa(host, device::Isa::kAvx2)},
          {"sse2", device::RestrictIsa(host, device::Isa::kSse2)},
          {"avx512", Avx512Device()}};
}

// A program and the kind of the kernel to tune in it (its first kernel of that kind).
struct Case {
  std::string name;
  TraceFn trace;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<bool> constant_inputs;
  ir::KernelKind kind;
  // When > 0: input 0's first dim is the symbol "batch", lowered for its shape class at this
  // value (a bucket of values, not a constant).
  int64_t batch = 0;
};

const TraceFn kMatMul = [](std::span<const Value> v) {
  return std::vector<Value>{matmul(v[0], v[1])};
};
const TraceFn kMatMulBias = [](std::span<const Value> v) {
  return std::vector<Value>{matmul(v[0], v[1]) + v[2]};
};
const TraceFn kElementwise = [](std::span<const Value> v) {
  return std::vector<Value>{gelu(v[0]) + v[1]};
};

Case LinearCase(int64_t m, int64_t k, int64_t n) {
  return {absl::StrCat("linear ", m, "x", k, "x", n),
          kMatMul,
          {{m, k}, {k, n}},
          {false, true},
          ir::KernelKind::kMatMul};
}

std::vector<Case> Cases() {
  return {
      LinearCase(512, 768, 3072),
      LinearCase(1, 4096, 4096),
      {"matmul+bias 37x300x150",
       kMatMulBias,
       {{37, 300}, {300, 150}, {150}},
       {},
       ir::KernelKind::kMatMul},
      {"linear [N,K] 64x256x96",
       [](std::span<const Value> v) {
         return std::vector<Value>{matmul(v[0], v[1], {.transpose_b = true})};
       },
       {{64, 256}, {96, 256}},
       {},
       ir::KernelKind::kMatMul},
      {"batched 4x32x64x48", kMatMul, {{4, 32, 64}, {4, 64, 48}}, {}, ir::KernelKind::kMatMul},
      {"elementwise 4096x4096",
       [](std::span<const Value> v) { return std::vector<Value>{v[0] + v[1]}; },
       {{4096, 4096}, {4096, 4096}},
       {},
       ir::KernelKind::kElementwise},
      {"sum over the last axis",
       [](std::span<const Value> v) { return std::vector<Value>{reduce_sum(v[0], 1)}; },
       {{256, 1000}},
       {},
       ir::KernelKind::kReduce},
      {"sum over axis 0",
       [](std::span<const Value> v) { return std::vector<Value>{reduce_sum(v[0], 0)}; },
       {{300, 5000}},
       {},
       ir::KernelKind::kReduce},
      {"softmax 512x768",
       [](std::span<const Value> v) { return std::vector<Value>{softmax(v[0])}; },
       {{512, 768}},
       {},
       ir::KernelKind::kRowOp},
      {"linear batch x768x3072",
       kMatMulBias,
       {{0, 768}, {768, 3072}, {3072}},
       {},
       ir::KernelKind::kMatMul,
       100},
      {"elementwise batch x1000",
       kElementwise,
       {{0, 1000}, {1000}},
       {},
       ir::KernelKind::kElementwise,
       37},
  };
}

// Levels 1-4 of `trace` on static shapes for `device` (no code generation).
absl::StatusOr<LoweredProgram> LowerFor(const Case& c, const device::DeviceInfo& device) {
  std::vector<TraceInput> inputs;
  for (const std::vector<int64_t>& s : c.shapes) {
    TraceInput in;
    for (int64_t d : s) in.shape.push_back(ir::SymExpr(d));
    inputs.push_back(in);
  }
  std::vector<ir::SymbolInfo> symbols;
  ShapeClass cls;
  if (c.batch > 0) {
    inputs[0].shape[0] = ir::SymExpr::Symbol(0);
    symbols.push_back({"batch", 1, 4096});
    const int64_t values[] = {c.batch};
    cls = Classify(values, symbols);
  }
  absl::StatusOr<ir::Graph> g = Trace(c.trace, inputs, symbols);
  if (!g.ok()) return g.status();
  PipelineOptions options;
  options.device = &device;
  options.constant_inputs = c.constant_inputs;
  return Lower(*g, cls, options);
}

int CallOf(const LoweredProgram& p, ir::KernelKind kind) {
  for (size_t i = 0; i < p.tiles.calls.size(); ++i) {
    if (p.tiles.calls[i].kernel.kind == kind) return static_cast<int>(i);
  }
  return -1;
}

ir::Kernel KernelOf(const Case& c, const device::DeviceInfo& device) {
  absl::StatusOr<LoweredProgram> p = LowerFor(c, device);
  EXPECT_TRUE(p.ok()) << c.name << ": " << p.status();
  if (!p.ok()) return {};
  const int call = CallOf(*p, c.kind);
  EXPECT_GE(call, 0) << c.name << " has no kernel of kind " << SpaceKind(c.kind);
  return call >= 0 ? p->tiles.calls[call].kernel : ir::Kernel{};
}

// The constraint's violations over the full product; -1 when the space has no such rule.
int64_t Violations(const tuner::SearchSpace& space, const std::string& rule) {
  for (size_t c = 0; c < space.constraints().size(); ++c) {
    if (space.constraints()[c].name == rule) return space.ViolationCount(static_cast<int>(c));
  }
  return -1;
}

const std::vector<int64_t>& Candidates(const tuner::SearchSpace& space, const std::string& name) {
  const int p = space.ParameterIndex(name);
  EXPECT_GE(p, 0) << name;
  return space.parameters()[std::max(p, 0)].values;
}

TEST(KernelSpace, KindNames) {
  EXPECT_STREQ(SpaceKind(ir::KernelKind::kElementwise), "elementwise");
  EXPECT_STREQ(SpaceKind(ir::KernelKind::kReduce), "reduce");
  EXPECT_STREQ(SpaceKind(ir::KernelKind::kRowOp), "row_op");
  EXPECT_STREQ(SpaceKind(ir::KernelKind::kMatMul), "matmul");
  EXPECT_STREQ(SpaceKind(ir::KernelKind::kScatterAdd), "scatter_add");
  EXPECT_THAT(SpaceKinds(),
              ::testing::ElementsAre("elementwise", "matmul", "reduce", "row_op", "scatter_add"));
}

TEST(KernelSpace, DefaultIsInTheSpaceAndRoundTrips) {
  for (const NamedDevice& d : Devices()) {
    for (const Case& c : Cases()) {
      SCOPED_TRACE(absl::StrCat(c.name, " on ", d.name));
      const ir::Kernel kernel = KernelOf(c, d.info);
      absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(kernel, d.info);
      ASSERT_TRUE(space.ok()) << space.status();
      EXPECT_EQ(space->kind(), SpaceKind(c.kind));
      EXPECT_EQ(space->search_space_version(), kKernelSpaceVersion);
      const tuner::Config def = ToSpaceConfig(*space, kernel.config);
      EXPECT_EQ(def, space->default_config());
      EXPECT_TRUE(space->Contains(def).ok()) << space->Contains(def);
      absl::StatusOr<ir::TileConfig> back = ApplySpaceConfig(*space, def, kernel.config);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_TRUE(*back == kernel.config);
      EXPECT_GT(space->size(), 1);
      EXPECT_LE(space->size(), 150000);
      EXPECT_LE(space->full_size(), tuner::SearchSpace::kMaxFullSize);
    }
  }
}

// A kernel's rules (KernelSpaceRules, which tuning records are checked with) answer as its
// enumerated space does: the same parameters and candidates, every valid config in, and for
// configs drawn from the whole product (most of them outside the space) and configs with a
// value that is no candidate, the same verdict and message; the same text parses to the same
// config. None of it enumerates a space.
TEST(KernelSpace, RulesAnswerAsTheEnumeratedSpaceDoes) {
  for (const NamedDevice& d : Devices()) {
    for (const Case& c : Cases()) {
      SCOPED_TRACE(absl::StrCat(c.name, " on ", d.name));
      const ir::Kernel kernel = KernelOf(c, d.info);
      absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(kernel, d.info);
      ASSERT_TRUE(space.ok()) << space.status();
      const int64_t built_before = tuner::SearchSpacesBuilt();
      absl::StatusOr<tuner::SpaceRules> rules = KernelSpaceRules(kernel, d.info);
      ASSERT_TRUE(rules.ok()) << rules.status();
      ASSERT_EQ(rules->num_parameters(), space->num_parameters());
      for (int p = 0; p < space->num_parameters(); ++p) {
        EXPECT_EQ(rules->parameters()[p].name, space->parameters()[p].name);
        EXPECT_EQ(rules->parameters()[p].values, space->parameters()[p].values);
      }
      EXPECT_EQ(rules->search_space_version(), kKernelSpaceVersion);
      EXPECT_EQ(rules->full_size(), space->full_size());
      for (const tuner::Config& config : space->Enumerate()) {
        ASSERT_TRUE(rules->Contains(config).ok()) << rules->Contains(config);
      }
      std::mt19937_64 random(5);
      int64_t outside = 0;
      for (int i = 0; i < 3000; ++i) {
        tuner::Config config = space->Decode(static_cast<int64_t>(random() % space->full_size()));
        const bool no_candidate = i % 10 == 0;
        if (no_candidate) config[random() % config.size()] = -7;
        const absl::Status want = space->Contains(config), got = rules->Contains(config);
        ASSERT_EQ(got, want) << space->ToString(config);
        outside += want.ok() ? 0 : 1;
        if (no_candidate) continue;
        absl::StatusOr<tuner::Config> parsed = rules->Parse(space->ToString(config));
        ASSERT_TRUE(parsed.ok()) << parsed.status();
        EXPECT_EQ(*parsed, config);
      }
      EXPECT_GT(outside, 0);
      EXPECT_EQ(tuner::SearchSpacesBuilt(), built_before);
    }
  }
  ir::Kernel bad = KernelOf(Cases()[2], device::DetectHost());
  bad.b = 99;
  const absl::Status rules = KernelSpaceRules(bad, device::DetectHost()).status();
  EXPECT_EQ(rules, KernelSearchSpace(bad, device::DetectHost()).status());
  EXPECT_EQ(rules.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(rules.message(), HasSubstr("operands a, b with rank + 1 strides"));
}

// The machine's rules, computed here from the applied TileConfig (not by the space).
void CheckMatMulRules(const ir::Kernel& k, const ir::TileConfig& c, const device::DeviceInfo& d,
                      const std::string& what) {
  const std::optional<int64_t> rows = ir::KernelGrid(k)[0].AsConstant();
  const int64_t kc_rows = c.kc > 0 ? c.kc : k.k.constant();
  EXPECT_LE(c.mr * c.nr_vectors + c.nr_vectors + 1, d.vector_registers) << what;
  if (c.pack_b) {
    EXPECT_GT(c.panel_bytes, 0) << what;
  }
  if (c.panel_bytes > 0) {
    EXPECT_LE(kc_rows * c.nr_vectors * c.vector_width * 4, c.panel_bytes) << what;
  }
  EXPECT_TRUE((rows.has_value() && c.tile_rows >= *rows) || c.tile_rows % c.mr == 0) << what;
  EXPECT_EQ(c.mc > 0, c.loop_order == ir::LoopOrder::kRowBlocksOuter) << what;
  EXPECT_EQ(c.mc % c.mr, 0) << what;
  if (c.mc > 0) {
    EXPECT_LE(c.mc * kc_rows * 4 + c.panel_bytes, d.l2_bytes) << what;
  }
}

TEST(KernelSpace, EveryConfigKeepsTheMachineRules) {
  for (const NamedDevice& d : Devices()) {
    for (const Case& c : Cases()) {
      SCOPED_TRACE(absl::StrCat(c.name, " on ", d.name));
      const ir::Kernel kernel = KernelOf(c, d.info);
      absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(kernel, d.info);
      ASSERT_TRUE(space.ok()) << space.status();
      const std::array<ir::SymExpr, 2> grid = ir::KernelGrid(kernel);
      for (const tuner::Config& config : space->Enumerate()) {
        absl::StatusOr<ir::TileConfig> tile = ApplySpaceConfig(*space, config, kernel.config);
        ASSERT_TRUE(tile.ok()) << tile.status();
        const std::string what = space->ToString(config);
        if (kernel.kind == ir::KernelKind::kMatMul) {
          CheckMatMulRules(kernel, *tile, d.info, what);
        } else {
          const std::optional<int64_t> cols = grid[1].AsConstant();
          EXPECT_TRUE(tile->tile_cols == 0 || (cols.has_value() && tile->tile_cols >= *cols) ||
                      tile->tile_cols % (tile->vector_width * tile->unroll) == 0)
              << what;
        }
        EXPECT_LE(tile->vector_width, d.info.f32_lanes()) << what;
        EXPECT_EQ(ToSpaceConfig(*space, *tile), config) << what;
        if (HasFailure()) return;
      }
    }
  }
}

TEST(KernelSpace, RulesPrune) {
  const device::DeviceInfo avx512 = Avx512Device();
  Case plain = Cases()[0];  // 512x768x3072, B not constant
  plain.constant_inputs = {};
  absl::StatusOr<tuner::SearchSpace> mm = KernelSearchSpace(KernelOf(plain, avx512), avx512);
  ASSERT_TRUE(mm.ok()) << mm.status();
  for (const char* rule :
       {"register_capacity", "fma_latency_hidden", "panel_holds_a_block", "row_blocks_need_mc",
        "a_block_fits_l2", "column_grain_whole_blocks", "mc_below_task_rows", "parallel_tasks"}) {
    EXPECT_GT(Violations(*mm, rule), 0) << rule;
  }
  // Few rows: grains of 8 rows (the default's) cut 6-row micro-tiles and leave no second row
  // block to pack for.
  absl::StatusOr<tuner::SearchSpace> few = KernelSearchSpace(KernelOf(Cases()[2], avx512), avx512);
  ASSERT_TRUE(few.ok()) << few.status();
  for (const char* rule : {"row_grain_whole_micro_tiles", "packing_needs_row_blocks"}) {
    EXPECT_GT(Violations(*few, rule), 0) << rule;
  }
  EXPECT_LT(mm->size(), mm->full_size() / 10);
  // One-row tasks of a matmul over a prepacked B sweep it row by row, whatever the micro-tile.
  const device::DeviceInfo host = device::DetectHost();
  absl::StatusOr<tuner::SearchSpace> one_row = KernelSearchSpace(KernelOf(Cases()[1], host), host);
  ASSERT_TRUE(one_row.ok()) << one_row.status();
  EXPECT_GT(Violations(*one_row, "one_row_sweep_ignores_micro_tile"), 0);

  const Case elementwise = Cases()[5];
  for (const NamedDevice& d : Devices()) {
    absl::StatusOr<tuner::SearchSpace> ew =
        KernelSearchSpace(KernelOf(elementwise, d.info), d.info);
    ASSERT_TRUE(ew.ok()) << ew.status();
    EXPECT_GT(Violations(*ew, "column_task_work"), 0) << d.name;
    EXPECT_LT(ew->size(), ew->full_size()) << d.name;
  }
  // 16 cores: a grain of 64 rows of softmax's 512 leaves 8 tasks, fewer than the default's.
  absl::StatusOr<tuner::SearchSpace> softmax =
      KernelSearchSpace(KernelOf(Cases()[8], avx512), avx512);
  ASSERT_TRUE(softmax.ok()) << softmax.status();
  EXPECT_GT(Violations(*softmax, "parallel_tasks"), 0);
  // The dot-product form has no K loop of its own to unroll.
  absl::StatusOr<tuner::SearchSpace> dot = KernelSearchSpace(KernelOf(Cases()[3], host), host);
  ASSERT_TRUE(dot.ok()) << dot.status();
  EXPECT_GT(Violations(*dot, "dot_unroll_needs_packing"), 0);
}

// The default policy's matmul configs (default_tile_configs.cc) for constant weights on a
// 32-register AVX-512 device with a 1 MiB L2: few rows (16 to 48) take one column block per
// task, 8 rows and long M two; a weight larger than the L2 is prefetched 4096 bytes ahead, one
// within it not at all.
TEST(KernelSpace, MatMulDefaultsForFewRowsAndLargeWeights) {
  const device::DeviceInfo avx512 = Avx512Device();
  struct Expect {
    int64_t m, k, n;
    int blocks_per_task;
    int64_t prefetch_b;
    int nr_vectors;
    int64_t kc;
  };
  // 8 x 3 needs M >= 24 and N a multiple of 48; one row block (M <= mr) takes K whole while
  // K rows of a column block fit the panel (512 KiB here: not 16384 x 32 floats).
  for (const Expect& e :
       {Expect{32, 768, 768, 1, 4096, 3, 512}, Expect{16, 768, 3072, 1, 4096, 2, 512},
        Expect{8, 768, 768, 2, 4096, 2, 0}, Expect{512, 768, 3072, 2, 4096, 4, 512},
        Expect{32, 128, 512, 1, 0, 2, 512}, Expect{8, 256, 256, 2, 0, 2, 0},
        Expect{32, 4096, 4096, 1, 4096, 2, 512}, Expect{8, 4096, 4096, 2, 4096, 2, 0},
        Expect{8, 16384, 256, 2, 4096, 2, 512}, Expect{4, 768, 3072, 2, 4096, 4, 0}}) {
    const Case c = LinearCase(e.m, e.k, e.n);
    SCOPED_TRACE(c.name);
    const ir::Kernel kernel = KernelOf(c, avx512);
    ASSERT_GE(kernel.b_packed, 0) << "a constant B is read prepacked";
    EXPECT_EQ(kernel.config.nr_vectors, e.nr_vectors);
    EXPECT_EQ(kernel.config.tile_cols, e.blocks_per_task * kernel.config.nr_vectors * 16);
    EXPECT_EQ(kernel.config.prefetch_b, e.prefetch_b);
    EXPECT_EQ(kernel.config.kc, e.kc);
  }
}

// A matmul whose rows are the split packs B per task: with K >= 128 and B not prepacked, one
// task per core (16 here) over all of N; K = 64 and a constant B keep two column blocks.
TEST(KernelSpace, MatMulRowSplitTakesAllColumnsWhenBIsPackedPerTask) {
  const device::DeviceInfo avx512 = Avx512Device();
  struct Expect {
    int64_t m, k, n;
    bool constant_b;
    int64_t tile_rows, tile_cols;
  };
  for (const Expect& e :
       {Expect{256, 256, 256, false, 18, 256}, Expect{300, 128, 300, false, 24, 300},
        Expect{384, 64, 384, false, 24, 128}, Expect{256, 256, 256, true, 18, 128}}) {
    const Case c{absl::StrCat("matmul ", e.m, "x", e.k, "x", e.n, e.constant_b ? " constant" : ""),
                 kMatMul,
                 {{e.m, e.k}, {e.k, e.n}},
                 {false, e.constant_b},
                 ir::KernelKind::kMatMul};
    SCOPED_TRACE(c.name);
    const ir::Kernel kernel = KernelOf(c, avx512);
    EXPECT_EQ(kernel.config.tile_cols, e.tile_cols);
    EXPECT_EQ(kernel.config.tile_rows, e.tile_rows);
  }
}

// Unbatched matmuls, and batched ones whose entries share B (x [batch, seq, d] times a weight),
// take K blocks of 512 on 32 registers, and over a constant B of at least 512 rows in all
// (batch x M) split their rows as the few-columns kernel over the same rows does (66-row tasks
// on this 16-core device); batch entries with a B of their own keep 256.
TEST(KernelSpace, MatMulKBlocksAndRowTasksOfSharedB) {
  const device::DeviceInfo avx512 = Avx512Device();
  struct Expect {
    std::string name;
    std::vector<std::vector<int64_t>> shapes;
    bool constant_b;
    int64_t kc, tile_rows;
  };
  const Expect cases[] = {
      {"few columns, constant", {{2048, 512}, {512, 128}}, true, 512, 66},
      {"many columns, constant", {{2048, 128}, {128, 512}}, true, 512, 66},
      {"constant, 128 rows", {{128, 768}, {768, 768}}, true, 512, 128},
      {"shared by the batch, constant", {{16, 128, 128}, {128, 512}}, true, 512, 66},
      {"shared by the batch", {{16, 128, 128}, {128, 512}}, false, 512, 66},
      {"a B per batch entry", {{16, 128, 128}, {16, 128, 512}}, false, 256, 66},
  };
  for (const Expect& e : cases) {
    SCOPED_TRACE(e.name);
    const ir::Kernel kernel = KernelOf(
        {e.name, kMatMul, e.shapes, {false, e.constant_b}, ir::KernelKind::kMatMul}, avx512);
    EXPECT_EQ(kernel.config.kc, e.kc);
    EXPECT_EQ(kernel.config.tile_rows, e.tile_rows);
  }
}

// Elementwise kernels with a transcendental prefetch their inputs 4096 bytes ahead by default;
// the distance is a parameter of elementwise spaces only (row ops prefetch the next row always).
TEST(KernelSpace, ElementwisePrefetchDefaultsAndCandidates) {
  const device::DeviceInfo avx512 = Avx512Device();
  const std::vector<Case> cases = Cases();
  for (const Case& c : cases) {
    if (c.kind != ir::KernelKind::kElementwise && c.kind != ir::KernelKind::kRowOp) continue;
    SCOPED_TRACE(c.name);
    const ir::Kernel kernel = KernelOf(c, avx512);
    const bool gelu = c.name == "elementwise batch x1000";
    EXPECT_EQ(kernel.config.prefetch_inputs, gelu ? 4096 : 0);
    absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(kernel, avx512);
    ASSERT_TRUE(space.ok()) << space.status();
    if (c.kind == ir::KernelKind::kRowOp) {
      EXPECT_THAT(Candidates(*space, "prefetch_inputs"), ::testing::ElementsAre(0));
    } else {
      EXPECT_THAT(Candidates(*space, "prefetch_inputs"), ::testing::ElementsAre(0, 4096, 16384));
    }
  }
}

// prefetch_b's distance serves only tasks of at most 4 row blocks; a task of more prefetches
// the next K block only, so the space keeps one nonzero value for it.
TEST(KernelSpace, ManyRowBlocksKeepOnePrefetchDistance) {
  const device::DeviceInfo avx512 = Avx512Device();
  for (int64_t m : {32, 128}) {
    const Case c = LinearCase(m, 4096, 4096);
    SCOPED_TRACE(c.name);
    absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(KernelOf(c, avx512), avx512);
    ASSERT_TRUE(space.ok()) << space.status();
    EXPECT_GT(Violations(*space, "many_row_blocks_ignore_prefetch_distance"), 0);
    const int prefetch = space->ParameterIndex("prefetch_b");
    const int tile_rows = space->ParameterIndex("tile_rows");
    const int mr = space->ParameterIndex("mr");
    int64_t few_far = 0, many_far = 0;
    for (const tuner::Config& config : space->Enumerate()) {
      const int64_t task_rows = config[tile_rows] > 0 ? std::min(config[tile_rows], m) : m;
      const bool many = task_rows > 4 * config[mr];
      if (config[prefetch] == 8192) ++(many ? many_far : few_far);
    }
    EXPECT_EQ(many_far, 0);
    // M = 32 in blocks of 8 is 4 row blocks per task: its distance is still searched.
    if (m == 32) {
      EXPECT_GT(few_far, 0);
    }
  }
}

TEST(KernelSpace, PrepackedMatMulKeepsItsBlock) {
  for (const NamedDevice& d : Devices()) {
    SCOPED_TRACE(d.name);
    const ir::Kernel kernel = KernelOf(Cases()[0], d.info);
    ASSERT_GE(kernel.b_packed, 0) << "a constant B is read prepacked";
    absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(kernel, d.info);
    ASSERT_TRUE(space.ok()) << space.status();
    EXPECT_THAT(Candidates(*space, "nr_vectors"), ::testing::ElementsAre(kernel.config.nr_vectors));
    EXPECT_THAT(Candidates(*space, "vector_width"),
                ::testing::ElementsAre(kernel.config.vector_width));
    EXPECT_GT(Candidates(*space, "mr").size(), 2u);
    EXPECT_THAT(Candidates(*space, "prefetch_b"), ::testing::Contains(0));
    EXPECT_THAT(Candidates(*space, "prefetch_b"), ::testing::Contains(4096));
  }
  // Not prepacked: the same shape tunes nr_vectors, and prefetch_b (which only a prepacked B
  // reads) is ignored.
  const device::DeviceInfo host = device::DetectHost();
  Case plain = Cases()[0];
  plain.constant_inputs = {};
  absl::StatusOr<tuner::SearchSpace> free = KernelSearchSpace(KernelOf(plain, host), host);
  ASSERT_TRUE(free.ok()) << free.status();
  EXPECT_GT(Candidates(*free, "nr_vectors").size(), 2u);
  EXPECT_THAT(Candidates(*free, "prefetch_b"), ::testing::ElementsAre(0));
}

TEST(KernelSpace, IgnoredFieldsHaveOnlyZero) {
  const device::DeviceInfo host = device::DetectHost();
  // The matmul's result is stored twice (as it is and through gelu): K blocking would keep
  // partial sums in one output only, so codegen does not block K.
  // A matmul whose result is stored twice, as it is and through gelu (built from a lowered
  // matmul with a second output): K blocking keeps partial sums in one output only, so codegen
  // does not block K.
  const Case single{
      "matmul 40x300x64", kMatMul, {{40, 300}, {300, 64}}, {}, ir::KernelKind::kMatMul};
  ir::Kernel kernel = KernelOf(single, host);
  ASSERT_EQ(kernel.stores.size(), 1u);
  ir::Access second = kernel.accesses[kernel.stores[0].access];
  second.buffer = kernel.num_buffers++;
  kernel.accesses.push_back(second);
  kernel.output.push_back({ir::ExprOp::kGeluErf, kernel.stores[0].value});
  kernel.stores.push_back(
      {static_cast<int>(kernel.accesses.size()) - 1, static_cast<int>(kernel.output.size()) - 1});
  ASSERT_GT(kernel.config.kc, 0) << "the default policy sets kc whether or not it is used";
  absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(kernel, host);
  ASSERT_TRUE(space.ok()) << space.status();
  EXPECT_THAT(Candidates(*space, "kc"), ::testing::ElementsAre(0));
  const int kc = space->ParameterIndex("kc");
  EXPECT_EQ(space->default_config()[kc], 0);
  for (const tuner::Config& config : space->Enumerate()) ASSERT_EQ(config[kc], 0);
  absl::StatusOr<ir::TileConfig> back =
      ApplySpaceConfig(*space, space->default_config(), kernel.config);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->kc, kernel.config.kc) << "an ignored field keeps its value";

  // B moves with the batch: no packing.
  const ir::Kernel batched = KernelOf(Cases()[4], host);
  absl::StatusOr<tuner::SearchSpace> bspace = KernelSearchSpace(batched, host);
  ASSERT_TRUE(bspace.ok()) << bspace.status();
  EXPECT_THAT(Candidates(*bspace, "pack_b"), ::testing::ElementsAre(0));
  // A reduction over the last axis has a one-column grid.
  const ir::Kernel sum = KernelOf(Cases()[6], host);
  absl::StatusOr<tuner::SearchSpace> sspace = KernelSearchSpace(sum, host);
  ASSERT_TRUE(sspace.ok()) << sspace.status();
  EXPECT_THAT(Candidates(*sspace, "tile_cols"), ::testing::ElementsAre(0));
  // Row ops have no tile_cols at all.
  absl::StatusOr<tuner::SearchSpace> rspace = KernelSearchSpace(KernelOf(Cases()[8], host), host);
  ASSERT_TRUE(rspace.ok()) << rspace.status();
  EXPECT_EQ(rspace->ParameterIndex("tile_cols"), -1);
}

TEST(KernelSpace, ApplySetsTheSpaceFieldsAndRejectsOthers) {
  const device::DeviceInfo host = device::DetectHost();
  const ir::Kernel kernel = KernelOf(Cases()[2], host);
  absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(kernel, host);
  ASSERT_TRUE(space.ok()) << space.status();
  tuner::Rng rng(7);
  for (int i = 0; i < 20; ++i) {
    const tuner::Config config = space->Sample(rng);
    absl::StatusOr<ir::TileConfig> tile = ApplySpaceConfig(*space, config, kernel.config);
    ASSERT_TRUE(tile.ok()) << tile.status();
    EXPECT_EQ(tile->mr, config[space->ParameterIndex("mr")]);
    EXPECT_EQ(tile->tile_cols, config[space->ParameterIndex("tile_cols")]);
    EXPECT_EQ(tile->pack_b, config[space->ParameterIndex("pack_b")] == 1);
    EXPECT_EQ(static_cast<int>(tile->loop_order), config[space->ParameterIndex("loop_order")]);
  }
  tuner::Config bad = space->default_config();
  bad[space->ParameterIndex("mr")] = 5;
  absl::StatusOr<ir::TileConfig> r = ApplySpaceConfig(*space, bad, kernel.config);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("parameter 'mr' has value 5"));
  // Registers: the largest candidates together spill.
  tuner::Config spill = space->default_config();
  spill[space->ParameterIndex("mr")] = Candidates(*space, "mr").back();
  spill[space->ParameterIndex("nr_vectors")] = Candidates(*space, "nr_vectors").back();
  r = ApplySpaceConfig(*space, spill, kernel.config);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("constraint 'register_capacity'"));

  tuner::SearchSpaceSpec foreign;
  foreign.kind = "foreign";
  foreign.parameters = {{"colour", {1, 2}}};
  absl::StatusOr<tuner::SearchSpace> other = tuner::SearchSpace::Create(foreign);
  ASSERT_TRUE(other.ok());
  r = ApplySpaceConfig(*other, {1}, kernel.config);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("parameter 'colour' is not a TileConfig field"));
}

TEST(KernelSpace, KindSpacesShareNamesAndVersion) {
  for (const NamedDevice& d : Devices()) {
    for (const Case& c : Cases()) {
      SCOPED_TRACE(absl::StrCat(c.name, " on ", d.name));
      absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(KernelOf(c, d.info), d.info);
      absl::StatusOr<tuner::SearchSpace> wide = KindSearchSpace(SpaceKind(c.kind), d.info);
      ASSERT_TRUE(space.ok()) << space.status();
      ASSERT_TRUE(wide.ok()) << wide.status();
      ASSERT_EQ(space->num_parameters(), wide->num_parameters());
      for (int p = 0; p < space->num_parameters(); ++p) {
        EXPECT_EQ(space->parameters()[p].name, wide->parameters()[p].name);
      }
      EXPECT_EQ(wide->search_space_version(), kKernelSpaceVersion);
    }
  }
  EXPECT_EQ(KindSearchSpace("convolution", device::DetectHost()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(KernelSpace, ValidateAcceptsEveryKernelSpaceConfig) {
  for (const NamedDevice& d : Devices()) {
    for (const Case& c : Cases()) {
      SCOPED_TRACE(absl::StrCat(c.name, " on ", d.name));
      absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(KernelOf(c, d.info), d.info);
      ASSERT_TRUE(space.ok()) << space.status();
      tuner::Rng rng(20261201);
      std::vector<tuner::Config> configs = {space->default_config()};
      for (int i = 0; i < 200; ++i) configs.push_back(space->Sample(rng));
      for (const tuner::Config& config : configs) {
        const std::string text = space->ToString(config);
        absl::Status s = ValidateSpaceConfig(SpaceKind(c.kind), kKernelSpaceVersion, text, d.info);
        ASSERT_TRUE(s.ok()) << s;
      }
    }
  }
}

TEST(KernelSpace, ValidateRejectsWithReasons) {
  const device::DeviceInfo host = device::DetectHost();
  const std::string lanes = absl::StrCat(host.f32_lanes());
  const std::string panel = absl::StrCat(host.l2_bytes / 2);
  auto matmul = [&](const std::string& mr, const std::string& nr) {
    return absl::StrCat("tile_rows=48,tile_cols=128,vector_width=", lanes, ",mr=", mr,
                        ",nr_vectors=", nr,
                        ",unroll=1,kc=256,mc=0,loop_order=0,pack_b=1,pack_prefetch_rows=0,",
                        "panel_bytes=", panel, ",prefetch_b=0,prefetch_output=0");
  };
  EXPECT_TRUE(ValidateSpaceConfig("matmul", kKernelSpaceVersion, matmul("4", "2"), host).ok());
  // Any grain: they come from a kernel's extents.
  EXPECT_TRUE(ValidateSpaceConfig("elementwise", kKernelSpaceVersion,
                                  "tile_rows=4097,tile_cols=12345,vector_width=4,unroll=2,"
                                  "streaming_stores=1,prefetch_inputs=4096",
                                  host)
                  .ok());

  absl::Status s = ValidateSpaceConfig("matmul", kKernelSpaceVersion, matmul("12", "6"), host);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("is outside the matmul space on this machine: violates "
                                     "constraint 'register_capacity'"));
  s = ValidateSpaceConfig("matmul", 1, matmul("4", "2"), host);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), absl::StrCat("search space version 1 (this pto's matmul space is version ",
                                      kKernelSpaceVersion, ")"));
  s = ValidateSpaceConfig("convolution", kKernelSpaceVersion, "tile_rows=1", host);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(),
            "unknown search space kind 'convolution' (known: elementwise, matmul, reduce, row_op, "
            "scatter_add)");
  s = ValidateSpaceConfig("elementwise", kKernelSpaceVersion,
                          "tile_rows=4,tile_cols=0,vector_width=4,unroll=2,colour=3", host);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("config 'tile_rows=4,tile_cols=0,vector_width=4,unroll=2,colour=3' is not "
                        "a config of the elementwise space: unknown parameter 'colour'"));
  s = ValidateSpaceConfig("elementwise", kKernelSpaceVersion,
                          "tile_rows=4,tile_cols=0,vector_width=4,unroll=3", host);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("parameter 'unroll' has value 3, expected one of {1,2,4,8}"));
  s = ValidateSpaceConfig("row_op", kKernelSpaceVersion, "tile_rows=4,vector_width=4", host);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("parameter 'unroll' is missing"));
  s = ValidateSpaceConfig("row_op", kKernelSpaceVersion, "tile_rows=-4,vector_width=4,unroll=1",
                          host);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("parameter 'tile_rows' has value '-4', expected a grain in "
                                     "[0, 1099511627776]"));
}

// Random inputs of `shapes` in [-1, 1].
std::vector<ops::HostTensor> RandomInputs(const std::vector<std::vector<int64_t>>& shapes,
                                          uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<ops::HostTensor> out;
  for (const std::vector<int64_t>& s : shapes) {
    ops::HostTensor t;
    t.shape = s;
    t.data.resize(t.NumElements());
    for (float& x : t.data) x = uniform(rng);
    out.push_back(std::move(t));
  }
  return out;
}

// `count` configs drawn from the space of `c`'s kernel on the host, each compiled through the
// real pipeline (the plan split across 2 threads by the config's grain) and checked against
// the ops/ reference.
void CheckSampledConfigs(const Case& c, int count, uint64_t seed, ops::Tolerance tol) {
  const device::DeviceInfo host = device::DetectHost();
  absl::StatusOr<LoweredProgram> lowered = LowerFor(c, host);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const int call = CallOf(*lowered, c.kind);
  ASSERT_GE(call, 0);
  const ir::Kernel& kernel = lowered->tiles.calls[call].kernel;
  absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(kernel, host);
  ASSERT_TRUE(space.ok()) << space.status();
  absl::StatusOr<std::unique_ptr<KernelCompiler>> compiler = KernelCompiler::Create(host);
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  const std::vector<ops::HostTensor> inputs = RandomInputs(c.shapes, 5);
  absl::StatusOr<std::vector<ops::HostTensor>> want = testing::RunReference(c.trace, inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  device::ThreadArena arena(2);
  tuner::Rng rng(seed);
  for (int i = 0; i < count; ++i) {
    const tuner::Config config = space->Sample(rng);
    SCOPED_TRACE(space->ToString(config));
    LoweredProgram program = *lowered;
    absl::StatusOr<ir::TileConfig> tile = ApplySpaceConfig(*space, config, kernel.config);
    ASSERT_TRUE(tile.ok()) << tile.status();
    program.tiles.calls[call].kernel.config = *tile;
    absl::StatusOr<BuiltPlan> built = BuildPlan(program, **compiler);
    ASSERT_TRUE(built.ok()) << built.status();
    const std::unique_ptr<Plan>& plan = built->plan;
    plan->parallel_threshold = 0;  // split by the grain however small the work
    std::vector<ops::HostTensor> got = *want;
    std::vector<void*> in, out;
    for (const ops::HostTensor& t : inputs) in.push_back(const_cast<float*>(t.data.data()));
    for (ops::HostTensor& t : got) {
      std::fill(t.data.begin(), t.data.end(), -7.f);
      out.push_back(t.data.data());
    }
    ASSERT_TRUE(plan->Run({}, in.data(), out.data(), &arena).ok());
    EXPECT_EQ(testing::Compare(got, *want, tol), "");
  }
}

TEST(KernelSpace, SampledMatMulConfigsCompileAndAreRight) {
  const Case c{"matmul+bias 67x300x200",
               kMatMulBias,
               {{67, 300}, {300, 200}, {200}},
               {},
               ir::KernelKind::kMatMul};
  CheckSampledConfigs(c, 8, 11, {.abs = 1e-4, .rel = 1e-4});
}

TEST(KernelSpace, SampledElementwiseConfigsCompileAndAreRight) {
  const Case c{"gelu(x) + y 37x5000",
               kElementwise,
               {{37, 5000}, {37, 5000}},
               {},
               ir::KernelKind::kElementwise};
  CheckSampledConfigs(c, 4, 12, {.abs = 1e-5, .rel = 1e-5});
}

// The sizes docs/tuning.md reports ("Search spaces of real kernels"), on this machine.
TEST(KernelSpace, ReferenceKernelSizes) {
  const device::DeviceInfo host = device::DetectHost();
  for (const Case& c : {Cases()[0], Cases()[1], Cases()[5]}) {
    absl::StatusOr<tuner::SearchSpace> space = KernelSearchSpace(KernelOf(c, host), host);
    ASSERT_TRUE(space.ok()) << space.status();
    std::printf("%s on %s: %lld configs of a full product of %lld\n", c.name.c_str(),
                host.cpu_name.c_str(), static_cast<long long>(space->size()),
                static_cast<long long>(space->full_size()));
    EXPECT_GE(space->size(), 100) << c.name;
    EXPECT_LE(space->size(), 100000) << c.name;
  }
}

}  // namespace
}  // namespace pto::jit
