#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "jit/codegen/emit_kernel.h"
#include "jit/codegen/matmul_scratch.h"
#include "kernel_test_util.h"
#include "matmul_kernel_builder.h"

namespace pto::jit::testing {
namespace {

using device::Isa;

// A 6-row tile with pack_b (B packed in panels of panel_bytes; none when 0), K in blocks of 16.
ir::TileConfig SixRowConfig(int nr_vectors, int64_t panel_bytes, int unroll) {
  ir::TileConfig config;
  config.mr = 6;
  config.nr_vectors = nr_vectors;
  config.pack_b = true;
  config.panel_bytes = panel_bytes;
  config.kc = 16;
  config.unroll = unroll;
  return config;
}

// Each kernel compiled for `isa` and checked on `cases`, whole and split into tasks of
// split_rows x split_cols (the plan's grains); nothing where the host cannot run `isa` (AVX2
// code runs on AVX-512 hosts too).
void CheckKernelsOnCases(Isa isa, std::initializer_list<const ir::Kernel*> kernels,
                         const std::vector<MatMulCase>& cases, int64_t split_rows,
                         int64_t split_cols, int64_t scratch_bytes, bool epilogue = false) {
  if (isa == Isa::kAvx512 && HostTarget().isa != Isa::kAvx512) return;
  for (const ir::Kernel* kernel : kernels) {
    absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), *kernel);
    ASSERT_TRUE(c.ok()) << c.status();
    for (const MatMulCase& mc : cases) {
      CheckMatMul(c->entry, mc, epilogue, 0, 0, kernel->name, scratch_bytes);
      CheckMatMul(c->entry, mc, epilogue, split_rows, split_cols, kernel->name + " split",
                  scratch_bytes);
    }
  }
}

TEST(MatMulTest, ShapesTilesAndMicroKernels) {
  const std::vector<MatMulCase> cases = {{1, 1, 1, 1},     {1, 3, 17, 5}, {1, 17, 33, 9},
                                         {1, 33, 100, 17}, {1, 4, 16, 1}, {2, 5, 19, 7},
                                         {3, 6, 8, 3}};
  struct Config {
    int mr, nrv, vw;
  };
  for (Config cfg : {Config{4, 2, 0}, Config{3, 3, 0}, Config{1, 1, 0}, Config{6, 2, 4}}) {
    const std::string name = "mm_" + std::to_string(cfg.mr) + "x" + std::to_string(cfg.nrv) +
                             "_vw" + std::to_string(cfg.vw);
    absl::StatusOr<CompiledObject> c = CompileKernel(
        EngineFor(Isa::kAvx512), MatMulKernel(false, false, false, cfg.mr, cfg.nrv, cfg.vw, name));
    ASSERT_TRUE(c.ok()) << c.status();
    for (const MatMulCase& mc : cases) {
      CheckMatMul(c->entry, mc, false, 0, 0, name);
      CheckMatMul(c->entry, mc, false, 5, 11, name + " split");
    }
  }
}

TEST(MatMulTest, TransposedABroadcastBAndEpilogue) {
  for (Isa isa : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
    for (bool ta : {false, true}) {
      for (bool bb : {false, true}) {
        const std::string name =
            std::string("mm_epi_") + device::IsaName(isa) + (ta ? "_ta" : "") + (bb ? "_bb" : "");
        absl::StatusOr<CompiledObject> c =
            CompileKernel(EngineFor(isa), MatMulKernel(ta, bb, true, 4, 2, 0, name));
        ASSERT_TRUE(c.ok()) << c.status();
        for (MatMulCase mc : std::vector<MatMulCase>{{1, 17, 33, 9}, {2, 5, 19, 7}, {3, 1, 3, 1}}) {
          mc.transpose_a = ta;
          mc.broadcast_b = bb;
          CheckMatMul(c->entry, mc, true, 0, 0, name);
          CheckMatMul(c->entry, mc, true, 3, 8, name + " split");
        }
      }
    }
  }
}

TEST(MatMulTest, ZeroExtents) {
  absl::StatusOr<CompiledObject> c =
      CompileKernel(EngineFor(Isa::kAvx512), MatMulKernel(false, false, true, 4, 2, 0, "mm_zero"));
  ASSERT_TRUE(c.ok()) << c.status();
  // K = 0: out = gelu(0 + bias) + residual.
  CheckMatMul(c->entry, {2, 3, 17, 0}, true, 0, 0, "k0");
  // M = 0 or N = 0 or batch = 0: nothing written.
  for (MatMulCase mc : std::vector<MatMulCase>{{1, 0, 5, 3}, {1, 5, 0, 3}, {0, 5, 5, 3}}) {
    CheckMatMul(c->entry, mc, true, 0, 0, "empty");
  }
}

TEST(MatMulTest, AssemblyUsesVectorFma) {
  ir::Kernel k = MatMulKernel(false, false, false, 4, 2, 0, "mm_asm");
  const std::string avx2 = KernelAssembly(k, TargetFor(Isa::kAvx2));
  EXPECT_NE(avx2.find("vfmadd"), std::string::npos);
  EXPECT_NE(avx2.find("ymm"), std::string::npos);
  EXPECT_EQ(avx2.find("zmm"), std::string::npos);
  const std::string sse2 = KernelAssembly(k, TargetFor(Isa::kSse2));
  EXPECT_EQ(sse2.find("vfmadd"), std::string::npos);
  EXPECT_EQ(sse2.find("ymm"), std::string::npos);
  EXPECT_NE(sse2.find("mulps"), std::string::npos);
  if (HostTarget().isa == Isa::kAvx512) {
    const std::string avx512 = KernelAssembly(k, TargetFor(Isa::kAvx512));
    EXPECT_NE(avx512.find("vfmadd"), std::string::npos);
    EXPECT_NE(avx512.find("zmm"), std::string::npos);
  }
}

// The columns past the last full vector are one masked vector, not scalar code: AVX-512 masks
// its loads, FMAs' inputs and stores with a k register, AVX2 uses vmaskmovps; neither has a
// scalar FMA left (CheckMatMul's shapes above check the results and that nothing past the
// output is written).
TEST(MatMulTest, ColumnTailIsOneMaskedVector) {
  for (bool epilogue : {false, true}) {
    ir::Kernel k = MatMulKernel(false, false, epilogue, 4, 2, 0, "mm_tail");
    const std::string avx2 = KernelAssembly(k, TargetFor(Isa::kAvx2));
    EXPECT_NE(avx2.find("vmaskmovps"), std::string::npos) << "epilogue " << epilogue;
    EXPECT_FALSE(std::regex_search(avx2, std::regex("vfmadd[0-9]+ss"))) << "epilogue " << epilogue;
    if (HostTarget().isa == Isa::kAvx512) {
      const std::string avx512 = KernelAssembly(k, TargetFor(Isa::kAvx512));
      EXPECT_TRUE(std::regex_search(avx512, std::regex("vmovups[^\\n]*\\{%k[1-7]\\}")))
          << "epilogue " << epilogue;
      EXPECT_FALSE(std::regex_search(avx512, std::regex("vfmadd[0-9]+ss")))
          << "epilogue " << epilogue;
    }
  }
}

// A static N's last few columns past its last whole vector, over a static K long enough, are
// dot products along K instead of a masked vector (the cost model in emit_matmul.cc): no masked
// load or store is left. Tails of 1, 2 and 3 columns, K a multiple of the vector width and not,
// with each epilogue, whole and split tile ranges, against the reference. A short K keeps the
// masked vector.
TEST(MatMulTest, FewTailColumnsOverALongStaticKAreDotProducts) {
  std::vector<Isa> isas = {Isa::kAvx2};
  if (HostTarget().isa == Isa::kAvx512) isas.push_back(Isa::kAvx512);
  const std::regex masked_avx512("vmovups[^\\n]*\\{%k[1-7]\\}");
  for (const Isa isa : isas) {
    const int64_t lanes = isa == Isa::kAvx512 ? 16 : 8;
    const auto has_masked = [&](const std::string& assembly) {
      return isa == Isa::kAvx512 ? std::regex_search(assembly, masked_avx512)
                                 : assembly.find("vmaskmovps") != std::string::npos;
    };
    struct Shape {
      int64_t n, k;
      bool dot;
    };
    for (const Shape s :
         {Shape{4 * lanes + 1, 65, true}, Shape{lanes + 1, 100, true},
          Shape{2 * lanes + 2, 128, true}, Shape{3, 300, true}, Shape{4 * lanes + 1, lanes, false},
          Shape{lanes + 3, 2 * lanes + 1, false}}) {
      for (const bool light : {true, false}) {
        MatMulOptions o;
        o.epilogue = true;
        o.light_epilogue = light;
        o.config = SixRowConfig(4, 0, 1);
        o.config->pack_b = false;
        o.config->kc = 256;
        o.static_n = s.n;
        o.static_k = s.k;
        const std::string name = absl::StrCat("mm_dot_tail_n", s.n, "_k", s.k,
                                              light ? "_light_" : "_heavy_", device::IsaName(isa));
        const ir::Kernel k = MatMulKernel(o, name);
        EXPECT_EQ(has_masked(KernelAssembly(k, TargetFor(isa))), !s.dot) << name;
        absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
        ASSERT_TRUE(c.ok()) << c.status();
        MatMulCase mc{2, 13, s.n, s.k};
        mc.light_epilogue = light;
        CheckMatMul(c->entry, mc, true, 0, 0, name);
        CheckMatMul(c->entry, mc, true, 6, 4 * lanes, name + " split on blocks");
        CheckMatMul(c->entry, mc, true, 5, lanes + 3, name + " split off blocks");
      }
    }
  }
}

// B stored [N, K] (K stride 1): the dot-product micro-kernel, over sizes 1, 3, 17, 33, 100,
// K both a multiple of the vector width and not, batched and batch-broadcast B, A with K
// stride 1 (vector loads) and A transposed (gathered along K), whole and split tile ranges.
TEST(MatMulTest, TransposedBShapesTilesAndMicroKernels) {
  const std::vector<MatMulCase> cases = {{1, 1, 1, 1},    {1, 3, 3, 3},       {1, 17, 33, 17},
                                         {1, 33, 17, 33}, {1, 100, 100, 100}, {1, 1, 100, 9},
                                         {1, 100, 1, 33}, {1, 4, 16, 16},     {1, 3, 17, 8},
                                         {2, 5, 19, 7},   {3, 6, 8, 3},       {2, 17, 3, 100}};
  struct Config {
    int mr, nrv, vw;
  };
  for (Config cfg :
       {Config{4, 2, 0}, Config{3, 3, 0}, Config{1, 1, 0}, Config{6, 2, 4}, Config{2, 3, 1}}) {
    for (bool ta : {false, true}) {
      for (bool bb : {false, true}) {
        const std::string name = "mmt_" + std::to_string(cfg.mr) + "x" + std::to_string(cfg.nrv) +
                                 "_vw" + std::to_string(cfg.vw) + (ta ? "_ta" : "") +
                                 (bb ? "_bb" : "");
        MatMulOptions o;
        o.transpose_a = ta;
        o.broadcast_b = bb;
        o.b_layout = BLayout::kNK;
        o.mr = cfg.mr;
        o.nrv = cfg.nrv;
        o.vw = cfg.vw;
        absl::StatusOr<CompiledObject> c =
            CompileKernel(EngineFor(Isa::kAvx512), MatMulKernel(o, name));
        ASSERT_TRUE(c.ok()) << c.status();
        for (MatMulCase mc : cases) {
          mc.transpose_a = ta;
          mc.broadcast_b = bb;
          mc.b_layout = BLayout::kNK;
          CheckMatMul(c->entry, mc, false, 0, 0, name);
          CheckMatMul(c->entry, mc, false, 5, 11, name + " split 5x11");
          CheckMatMul(c->entry, mc, false, 3, 1, name + " split 3x1");
        }
      }
    }
  }
}

// The dot-product form with the epilogue (bias + gelu + residual) on every ISA, and B with
// neither stride 1 (per-lane loads in the broadcast form).
TEST(MatMulTest, TransposedAndStridedBWithEpilogue) {
  for (Isa isa : {Isa::kSse2, Isa::kAvx2, Isa::kAvx512}) {
    for (BLayout layout : {BLayout::kNK, BLayout::kStrided}) {
      for (bool ta : {false, true}) {
        for (bool bb : {false, true}) {
          const std::string name = std::string("mmt_epi_") + device::IsaName(isa) +
                                   (layout == BLayout::kNK ? "_nk" : "_strided") +
                                   (ta ? "_ta" : "") + (bb ? "_bb" : "");
          MatMulOptions o;
          o.transpose_a = ta;
          o.broadcast_b = bb;
          o.b_layout = layout;
          o.epilogue = true;
          absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), MatMulKernel(o, name));
          ASSERT_TRUE(c.ok()) << c.status();
          for (MatMulCase mc : std::vector<MatMulCase>{
                   {1, 17, 33, 9}, {2, 5, 19, 7}, {3, 1, 3, 1}, {1, 33, 100, 17}, {2, 3, 17, 33}}) {
            mc.transpose_a = ta;
            mc.broadcast_b = bb;
            mc.b_layout = layout;
            CheckMatMul(c->entry, mc, true, 0, 0, name);
            CheckMatMul(c->entry, mc, true, 3, 8, name + " split");
          }
        }
      }
    }
  }
}

// A short epilogue (a scale, a bias, a residual) is inlined at every accumulator; an activation
// is a function the micro-tiles call. Both on row and column tails, K blocks and tile splits.
TEST(MatMulTest, ShortEpiloguesInlineActivationsCalled) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    for (const bool light : {true, false}) {
      const ir::TileConfig config = SixRowConfig(4, 0, 4);
      MatMulOptions o;
      o.epilogue = true;
      o.light_epilogue = light;
      o.config = config;
      const std::string name =
          absl::StrCat("mm_epi_", light ? "light_" : "gelu_", device::IsaName(isa));
      const ir::Kernel k = MatMulKernel(o, name);
      const std::string assembly = KernelAssembly(k, TargetFor(isa));
      EXPECT_EQ(assembly.find("call") != std::string::npos, !light) << name;
      absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
      ASSERT_TRUE(c.ok()) << c.status();
      for (MatMulCase mc : std::vector<MatMulCase>{{2, 13, 70, 37}, {1, 24, 128, 32}}) {
        mc.light_epilogue = light;
        CheckMatMul(c->entry, mc, true, 0, 0, name);
        CheckMatMul(c->entry, mc, true, 7, 33, name + " split 7x33");
      }
    }
  }
}

// The M tail (fewer than mr rows of a batch entry or a tile) runs as one block of M mod mr
// rows for a static M (2 for a symbolic one, the other shapes above), then single rows: the
// block's code is there only when M mod mr > 1. Batch entries and tile ranges that end inside
// a block of mr rows, with the tail block, single rows and both.
TEST(MatMulTest, StaticMTailRunsAsOneBlock) {
  const Isa isa = HostTarget().isa == Isa::kAvx512 ? Isa::kAvx512 : Isa::kAvx2;
  std::vector<size_t> fmas;
  for (const int64_t m : {18, 17, 16, 1}) {
    const ir::TileConfig config = SixRowConfig(2, 8192, 2);
    MatMulOptions o;
    o.epilogue = true;
    o.light_epilogue = true;
    o.config = config;
    o.static_m = m;
    const std::string name = absl::StrCat("mm_static_m", m, "_", device::IsaName(isa));
    const ir::Kernel k = MatMulKernel(o, name);
    const std::string assembly = KernelAssembly(k, TargetFor(isa));
    fmas.push_back(CountOf(assembly, "vfmadd"));
    absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
    ASSERT_TRUE(c.ok()) << c.status();
    for (int64_t kk : {37, 8}) {
      MatMulCase mc{2, m, 70, kk};
      mc.light_epilogue = true;
      CheckMatMul(c->entry, mc, true, 0, 0, name);
      CheckMatMul(c->entry, mc, true, 5, 33, name + " split 5x33", config.panel_bytes);
      CheckMatMul(c->entry, mc, true, 7, 16, name + " split 7x16", config.panel_bytes);
      CheckMatMul(c->entry, mc, true, 12, 70, name + " split 12x70", config.panel_bytes);
    }
  }
  // M = 17 and 16 have a tail block (5 and 4 rows), M = 18 none.
  EXPECT_GT(fmas[1], fmas[0]);
  EXPECT_GT(fmas[2], fmas[0]);
  EXPECT_GT(fmas[1], fmas[2]);
}

// The rows of a micro-tile are stored at constant displacements from one address: for a static
// N, row i of the tile i * N * 4 bytes past the first, where multiplying each row's index by N
// would keep a multiply and the row indices live (spilled, with 8 rows of 2 vectors). The
// small matmul of the kernel bench, 23 x 29 x 31, against the reference too.
TEST(MatMulTest, MicroTileRowsAreStoredAtConstantDisplacements) {
  std::vector<Isa> isas = {Isa::kAvx2};
  if (HostTarget().isa == Isa::kAvx512) isas.push_back(Isa::kAvx512);
  for (const Isa isa : isas) {
    MatMulOptions o;
    o.mr = 8;
    o.nrv = 2;
    o.static_m = 23;
    o.static_n = 31;
    o.static_k = 29;
    const std::string name = absl::StrCat("mm_row_displacements_", device::IsaName(isa));
    const ir::Kernel k = MatMulKernel(o, name);
    const std::string assembly = KernelAssembly(k, TargetFor(isa));
    // A row of 31 floats is 124 bytes: the last row of a block of 8 is stored 7 * 124 bytes
    // past the first.
    EXPECT_TRUE(std::regex_search(assembly, std::regex(R"(vmovups\s+%[yz]mm\d+, 868\()")))
        << name;
    absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
    ASSERT_TRUE(c.ok()) << c.status();
    CheckMatMul(c->entry, MatMulCase{2, 23, 31, 29}, false, 0, 0, name);
    CheckMatMul(c->entry, MatMulCase{2, 23, 31, 29}, false, 7, 16, name + " split 7x16");
  }
}

// The whole vectors a static N leaves past its last block of 4 vectors are one micro-tile, and
// with columns past its last whole vector, that micro-tile takes them as its last vector,
// masked: 2 whole vectors and no tail, a micro-tile of 2; 1 whole vector and a tail, a
// micro-tile of 2 with the last masked (a micro-tile in the assembly that 1 whole vector alone,
// run as single vectors, does not have); 3 and a tail, 4; below one block, 2 and a tail, 3.
// Column ranges on a block and off it (where other columns remain, single vectors and a masked
// one take them), K blocks; values against the reference, with a light epilogue and a heavy
// one (whose micro-tiles never mask one vector alone).
TEST(MatMulTest, WholeVectorsPastTheLastBlockAreOneMicroTile) {
  std::vector<Isa> isas = {Isa::kAvx2};
  if (HostTarget().isa == Isa::kAvx512) isas.push_back(Isa::kAvx512);
  for (const Isa isa : isas) {
    const int64_t lanes = isa == Isa::kAvx512 ? 16 : 8;
    std::vector<size_t> fmas;
    for (const int64_t n :
         {7 * lanes + 5, 6 * lanes, 5 * lanes + 1, 2 * lanes + 3, 5 * lanes, 4 * lanes + 3}) {
      for (const bool light : {true, false}) {
        MatMulOptions o;
        o.epilogue = true;
        o.light_epilogue = light;
        o.config = SixRowConfig(4, 0, 2);
        o.static_n = n;
        const std::string name =
            absl::StrCat("mm_rest_n", n, light ? "_light_" : "_heavy_", device::IsaName(isa));
        const ir::Kernel k = MatMulKernel(o, name);
        if (light) fmas.push_back(CountOf(KernelAssembly(k, TargetFor(isa)), "vfmadd"));
        absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
        ASSERT_TRUE(c.ok()) << c.status();
        for (int64_t kk : {37, 8}) {
          MatMulCase mc{2, 13, n, kk};
          mc.light_epilogue = light;
          CheckMatMul(c->entry, mc, true, 0, 0, name);
          CheckMatMul(c->entry, mc, true, 6, 4 * lanes, name + " split on blocks");
          CheckMatMul(c->entry, mc, true, 5, lanes + 3, name + " split off blocks");
        }
      }
    }
    // Against 1 whole vector past the last block (single vectors, then the masked one):
    EXPECT_GT(fmas[1], fmas[4]) << device::IsaName(isa);  // 2 whole vectors: their micro-tile
    EXPECT_GT(fmas[2], fmas[4]) << device::IsaName(isa);  // 1 and a tail: folded
    EXPECT_GT(fmas[0], fmas[4]) << device::IsaName(isa);  // 3 and a tail: folded
    EXPECT_GT(fmas[3], fmas[4]) << device::IsaName(isa);  // 2 and a tail, below a block
    // A tail alone (no whole vector past the last block) has nothing to fold into.
    EXPECT_EQ(fmas[5], fmas[4]) << device::IsaName(isa);
  }
}

// narrow_tail: on AVX-512, a micro-tile's masked last vector of at most 8 columns (N = 2
// vectors + 8, + 3; 1 vector + 5 below a block; the tail alone, N = 8, and after a whole block,
// N = 64 + 5) is a ymm vector: ymm FMAs, where without it, or with 9 tail columns, every FMA
// is a zmm one. Values against the reference with a light epilogue and a heavy one (whose
// micro-tiles keep full vectors), K blocks continuing partial sums (K = 37 over blocks of 16),
// split tile ranges on blocks and off them.
TEST(MatMulTest, NarrowTailTakesHalfVectorsForAFewLastColumns) {
  const std::regex ymm_fma("vfmadd[0-9]+ps\\s[^\\n]*ymm");
  struct Shape {
    int64_t n;
    bool narrow;
  };
  for (const Shape s : {Shape{2 * 16 + 8, true}, Shape{2 * 16 + 3, true}, Shape{16 + 5, true},
                        Shape{8, true}, Shape{4 * 16 + 5, true}, Shape{2 * 16 + 9, false}}) {
    for (const bool light : {true, false}) {
      for (const bool narrow : {true, false}) {
        MatMulOptions o;
        o.epilogue = true;
        o.light_epilogue = light;
        o.config = SixRowConfig(4, 0, 2);
        o.config->pack_b = false;
        o.config->narrow_tail = narrow;
        o.static_n = s.n;
        const std::string name =
            absl::StrCat("mm_narrow_n", s.n, light ? "_light" : "_heavy", narrow ? "" : "_off");
        const ir::Kernel k = MatMulKernel(o, name);
        const std::string assembly = KernelAssembly(k, CompileOnlyTargetFor(Isa::kAvx512));
        EXPECT_EQ(std::regex_search(assembly, ymm_fma), narrow && light && s.narrow) << name << "\n"
                                                                                     << assembly;
        std::vector<MatMulCase> cases;
        for (int64_t kk : {37, 8}) {
          MatMulCase mc{2, 13, s.n, kk};
          mc.light_epilogue = light;
          cases.push_back(mc);
        }
        CheckKernelsOnCases(Isa::kAvx512, {&k}, cases, 5, 2 * 16, 0, /*epilogue=*/true);
        CheckKernelsOnCases(Isa::kAvx512, {&k}, cases, 6, 16 + 3, 0, /*epilogue=*/true);
      }
    }
  }
}

// The instructions of each loop of `assembly`: from a label to a later jump back to it.
std::vector<std::string> LoopBodies(const std::string& assembly) {
  const std::vector<std::string> lines = absl::StrSplit(assembly, '\n');
  const std::regex label("^(\\.LBB\\w+):");
  const std::regex jump("^\\s+j[a-z]+\\s+(\\.LBB\\w+)");
  std::map<std::string, size_t> labels;
  std::vector<std::string> bodies;
  std::smatch m;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (std::regex_search(lines[i], m, label)) labels[m[1]] = i;
    if (!std::regex_search(lines[i], m, jump)) continue;
    const auto it = labels.find(m[1]);
    if (it == labels.end()) continue;  // a forward jump
    std::string body;
    for (size_t j = it->second; j <= i; ++j) absl::StrAppend(&body, lines[j], "\n");
    bodies.push_back(body);
  }
  return bodies;
}

// On AVX-512 a micro-tile's tail mask is made once per micro-tile, outside its K loop: LLVM
// re-made a static N's constant mask inside the loop with a move from a general register each
// iteration, and a symbolic N's with two compares. No loop that has FMAs makes a mask, for
// static tails of 15, 3 and 5 columns (the last two also narrow) and a symbolic N (its masked
// remainder), plain and with the light epilogue; values against the reference, whole and
// split.
TEST(MatMulTest, TailMaskIsNotRemadeInTheKLoop) {
  const std::regex makes_mask("kmov[bwdq]\\s+%[er]|vpcmp");
  for (const std::optional<int64_t> n : {std::optional<int64_t>(31), std::optional<int64_t>(35),
                                         std::optional<int64_t>(21), std::optional<int64_t>()}) {
    for (const bool light : {false, true}) {
      for (const bool narrow : {false, true}) {
        if (!n.has_value() && narrow) continue;  // narrow_tail takes a static N
        MatMulOptions o;
        o.epilogue = light;
        o.light_epilogue = light;
        o.config = SixRowConfig(2, 0, 4);
        o.config->mr = 8;
        o.config->pack_b = false;
        o.config->kc = 0;
        o.config->narrow_tail = narrow;
        o.static_n = n;
        o.static_k = 29;
        const std::string name =
            absl::StrCat("mm_tail_mask_n", n.has_value() ? std::to_string(*n) : "sym",
                         light ? "_light" : "", narrow ? "_narrow" : "");
        const ir::Kernel k = MatMulKernel(o, name);
        const std::string assembly = KernelAssembly(k, CompileOnlyTargetFor(Isa::kAvx512));
        int fma_loops = 0;
        for (const std::string& body : LoopBodies(assembly)) {
          if (body.find("vfmadd") == std::string::npos) continue;
          ++fma_loops;
          EXPECT_FALSE(std::regex_search(body, makes_mask)) << name << "\n" << body;
        }
        EXPECT_GT(fma_loops, 0) << name << "\n" << assembly;
        std::vector<MatMulCase> cases;
        for (const int64_t cols :
             n.has_value() ? std::vector<int64_t>{*n} : std::vector<int64_t>{31, 40, 100, 8}) {
          MatMulCase mc{2, 23, cols, 29};
          mc.light_epilogue = light;
          cases.push_back(mc);
        }
        CheckKernelsOnCases(Isa::kAvx512, {&k}, cases, 8, 16, 0, /*epilogue=*/light);
      }
    }
  }
}

// B stored [N, K] and moving with the batch (attention's q.k^T), packed: the tile's rows are
// taken one batch entry at a time and each entry's panel is packed from its own B. Tile ranges
// that start, end and span batch boundaries; K blocks; rows too few to pack; with the epilogue.
TEST(MatMulTest, BatchedTransposedBPackedPerBatchEntry) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    for (const bool epilogue : {false, true}) {
      ir::TileConfig config;
      config.mr = 4;
      config.nr_vectors = 2;
      config.pack_b = true;
      config.panel_bytes = 4096;
      config.kc = 16;
      config.unroll = 2;
      MatMulOptions o;
      o.b_layout = BLayout::kNK;
      o.epilogue = epilogue;
      o.config = config;
      const std::string name =
          std::string("mm_batched_nk_") + device::IsaName(isa) + (epilogue ? "_epi" : "");
      absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), MatMulKernel(o, name));
      ASSERT_TRUE(c.ok()) << c.status();
      for (MatMulCase mc : std::vector<MatMulCase>{
               {3, 17, 40, 37}, {2, 8, 33, 16}, {4, 3, 20, 5}, {2, 40, 64, 70}}) {
        mc.b_layout = BLayout::kNK;
        CheckMatMul(c->entry, mc, epilogue, 0, 0, name, config.panel_bytes);
        CheckMatMul(c->entry, mc, epilogue, 5, 11, name + " split 5x11", config.panel_bytes);
        CheckMatMul(c->entry, mc, epilogue, 13, 0, name + " split 13 rows", config.panel_bytes);
      }
    }
  }
}

// A stored [K, M] (a weight gradient's xᵀ) with K blocks: each run of rows is copied to the
// scratch a K block at a time (MatMulASlab). K blocks of 2048 leave room for runs of 12 rows,
// so M = 40 takes four runs per batch entry (the last of 4 rows, a partial square), K = 2100
// two blocks (the second with a K tail of 4 steps past its squares); without the scratch the
// lean micro-tiles read A in place.
TEST(MatMulTest, AReadAcrossKIsCopiedToTheScratchABlockAtATime) {
  std::vector<Isa> isas = {Isa::kAvx2};
  if (HostTarget().isa == Isa::kAvx512) isas.push_back(Isa::kAvx512);
  for (Isa isa : isas) {
    for (const bool pack_b : {false, true}) {
      ir::TileConfig config = SixRowConfig(2, pack_b ? 65536 : 0, 2);
      config.pack_b = pack_b;
      config.kc = 2048;
      MatMulOptions o;
      o.transpose_a = true;
      o.epilogue = true;
      o.config = config;
      const std::string name =
          absl::StrCat("mm_slab_", device::IsaName(isa), pack_b ? "_packb" : "");
      const ir::Kernel kernel = MatMulKernel(o, name);
      const MatMulASlab slab = MatMulASlabOf(kernel);
      EXPECT_EQ(slab.rows, 12) << name;
      const int64_t scratch = KernelScratchBytes(kernel);
      EXPECT_EQ(scratch, (pack_b ? 65536 : 0) + 4 * (12 + 16) * slab.row_stride) << name;
      absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), kernel);
      ASSERT_TRUE(c.ok()) << c.status();
      for (MatMulCase mc : std::vector<MatMulCase>{
               {2, 40, 33, 2100}, {1, 40, 70, 37}, {3, 5, 19, 7}, {1, 1, 17, 20}}) {
        mc.transpose_a = true;
        CheckMatMul(c->entry, mc, true, 0, 0, name, scratch);
        CheckMatMul(c->entry, mc, true, 7, 11, name + " split 7x11", scratch);
        CheckMatMul(c->entry, mc, true, 30, 0, name + " split 30 rows", scratch);
        CheckMatMul(c->entry, mc, true, 0, 0, name + " no scratch", 0);
      }
    }
  }
}

// A prepacked B (a constant weight) over every kind of range: column ranges on a block (the
// plan's, which read the packed blocks), off a block (read B directly with the lean
// micro-tiles), one-row tiles (matrix-vector over the blocks, the last columns lean), K blocks,
// both epilogues. The lean fallback is not a second full set of micro-tiles: the kernel has
// fewer FMAs than the same kernel packing panels itself (its packed and direct rows).
TEST(MatMulTest, PrepackedBEveryRangeWithOneFullSetOfMicroTiles) {
  std::vector<Isa> isas = {Isa::kAvx2};
  if (HostTarget().isa == Isa::kAvx512) isas.push_back(Isa::kAvx512);
  for (Isa isa : isas) {
    const int block = 2 * TargetFor(isa).f32_lanes();
    for (const bool light : {true, false}) {
      const ir::TileConfig config = SixRowConfig(2, 8192, 4);
      MatMulOptions o;
      o.broadcast_b = true;
      o.epilogue = true;
      o.light_epilogue = light;
      o.config = config;
      const std::string name =
          absl::StrCat("mm_prepacked_", light ? "light_" : "gelu_", device::IsaName(isa));
      const ir::Kernel panels = MatMulKernel(o, name + "_panels");
      o.prepacked_block = block;
      const ir::Kernel k = MatMulKernel(o, name);
      if (light) {
        EXPECT_LT(CountOf(KernelAssembly(k, TargetFor(isa)), "vfmadd"),
                  CountOf(KernelAssembly(panels, TargetFor(isa)), "vfmadd"))
            << name;
      }
      absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
      ASSERT_TRUE(c.ok()) << c.status();
      for (MatMulCase mc : std::vector<MatMulCase>{
               {1, 1, 70, 37}, {1, 1, 64, 8}, {2, 13, 70, 37}, {1, 40, 100, 5}, {2, 3, 20, 16}}) {
        mc.broadcast_b = true;
        mc.light_epilogue = light;
        mc.prepacked_block = block;
        CheckMatMul(c->entry, mc, true, 0, 0, name, config.panel_bytes);
        CheckMatMul(c->entry, mc, true, 5, block, name + " split 5 x block", config.panel_bytes);
        CheckMatMul(c->entry, mc, true, 7, 11, name + " split 7x11", config.panel_bytes);
        CheckMatMul(c->entry, mc, true, 1, 0, name + " one-row tiles", config.panel_bytes);
        CheckMatMul(c->entry, mc, true, 1, 33, name + " one-row tiles x33", config.panel_bytes);
      }
    }
  }
}

// prefetch_b prefetches a prepacked B's stream (one prefetcht0 per 64 bytes a K step loads);
// B packed by the kernel itself (in the scratch, in cache) is not prefetched. Results are the
// same with and without.
TEST(MatMulTest, PrefetchBOnlyForAPrepackedB) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const CodegenTarget target = TargetFor(isa);
    const int lanes = target.f32_lanes();
    const int block = 2 * lanes;
    ir::TileConfig config = SixRowConfig(2, 8192, 4);
    config.prefetch_b = 4096;
    MatMulOptions o;
    o.broadcast_b = true;
    o.config = config;
    const std::string name = absl::StrCat("mm_prefetch_", device::IsaName(isa));
    const ir::Kernel panels = MatMulKernel(o, name + "_panels");
    o.prepacked_block = block;
    const ir::Kernel k = MatMulKernel(o, name + "_prepacked");
    config.prefetch_b = 0;
    o.config = config;
    const ir::Kernel none = MatMulKernel(o, name + "_none");
    EXPECT_EQ(CountOf(KernelAssembly(panels, target), "prefetcht0"), 0) << name;
    EXPECT_EQ(CountOf(KernelAssembly(none, target), "prefetcht0"), 0) << name;
    // A K step of the full micro-tiles loads 2 vectors (2 x lanes x 4 bytes: lanes / 8 lines),
    // and the K loop is unrolled 4 times.
    const std::string with = KernelAssembly(k, target);
    EXPECT_GE(CountOf(with, "prefetcht0"), 4 * lanes / 8) << name << "\n" << with;
    std::vector<MatMulCase> cases = {{1, 13, 300, 70}, {2, 6, 64, 64}};
    for (MatMulCase& mc : cases) {
      mc.broadcast_b = true;
      mc.prepacked_block = block;
    }
    CheckKernelsOnCases(isa, {&k, &none}, cases, 5, block, config.panel_bytes);
  }
}

// prefetch_output: each micro-tile prefetches its output lines for writing (prefetchw) before
// its K loop, one per 64 bytes of each row, and the lines of an epilogue operand stored as the
// output is for reading (prefetcht0): the light epilogue's residual [b, m, n], not its bias
// [n]; without prefetch_output there is neither, and without an epilogue no prefetcht0.
// Results are the same, with row and column tails (M = 13, N = 70) and a split of the columns.
TEST(MatMulTest, PrefetchOutputPrefetchesTheOutputForWritingAndItsEpilogueOperandForReading) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const CodegenTarget target = TargetFor(isa);
    const int lanes = target.f32_lanes();
    ir::TileConfig config = SixRowConfig(2, 8192, 4);
    const std::string name = absl::StrCat("mm_prefetch_output_", device::IsaName(isa));
    // Kernels with (prefetch) and without it, plain and with the light epilogue.
    auto kernel = [&](bool prefetch, bool epilogue) {
      config.prefetch_output = prefetch;
      MatMulOptions o;
      o.config = config;
      o.epilogue = o.light_epilogue = epilogue;
      return MatMulKernel(o, absl::StrCat(name, prefetch ? "" : "_none", epilogue ? "_epi" : ""));
    };
    const ir::Kernel k = kernel(true, false), none = kernel(false, false);
    const ir::Kernel epi = kernel(true, true), epi_none = kernel(false, true);
    // The full 6 x 2 micro-tile: 6 rows of 2 vectors (2 x lanes floats: lanes / 8 lines).
    const std::string with = KernelAssembly(k, target), with_epi = KernelAssembly(epi, target);
    EXPECT_GE(CountOf(with, "prefetchw"), 6 * lanes / 8) << name << "\n" << with;
    EXPECT_EQ(CountOf(with, "prefetcht0"), 0) << name;
    EXPECT_GE(CountOf(with_epi, "prefetcht0"), 6 * lanes / 8) << name << "\n" << with_epi;
    EXPECT_EQ(CountOf(KernelAssembly(none, target), "prefetchw"), 0) << name;
    EXPECT_EQ(CountOf(KernelAssembly(epi_none, target), "prefetcht0"), 0) << name;
    const std::vector<MatMulCase> cases = {{1, 13, 70, 64}, {2, 6, 64, 27}};
    CheckKernelsOnCases(isa, {&k, &none}, cases, 5, 2 * lanes, config.panel_bytes);
    std::vector<MatMulCase> epi_cases = cases;
    for (MatMulCase& mc : epi_cases) mc.light_epilogue = true;
    CheckKernelsOnCases(isa, {&epi, &epi_none}, epi_cases, 5, 2 * lanes, config.panel_bytes,
                        /*epilogue=*/true);
  }
}

// pack_prefetch_rows: packing a B stored [K, N] prefetches each row's lines that many rows
// ahead into the L1 (prefetcht0, one per 64 bytes a row of the column block holds); without it
// the kernel has no prefetcht0 (K blocks of 16 rows: no A-row prefetch either). Results are the
// same, with K = 70 (a short last K block, whose prefetches run past B) and splits.
TEST(MatMulTest, PackPrefetchRowsPrefetchesBRowsAheadOfThePack) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const CodegenTarget target = TargetFor(isa);
    const int lanes = target.f32_lanes();
    ir::TileConfig config = SixRowConfig(2, 8192, 4);
    config.pack_prefetch_rows = 16;
    MatMulOptions o;
    o.broadcast_b = true;  // B shared by the batch entries: the kernel packs it
    o.config = config;
    const std::string name = absl::StrCat("mm_pack_prefetch_", device::IsaName(isa));
    const ir::Kernel k = MatMulKernel(o, name);
    config.pack_prefetch_rows = 0;
    o.config = config;
    const ir::Kernel none = MatMulKernel(o, name + "_none");
    // A packed row of the block: 2 vectors of `lanes` floats, lanes / 8 lines.
    const std::string with = KernelAssembly(k, target);
    EXPECT_GE(CountOf(with, "prefetcht0"), lanes / 8) << name << "\n" << with;
    EXPECT_EQ(CountOf(KernelAssembly(none, target), "prefetcht0"), 0) << name;
    std::vector<MatMulCase> cases = {{1, 40, 64, 70}, {2, 13, 37, 20}};
    for (MatMulCase& mc : cases) mc.broadcast_b = true;
    CheckKernelsOnCases(isa, {&k, &none}, cases, 13, 2 * lanes, config.panel_bytes);
  }
}

// A stored [K, M] and read in place (no K blocks, so no slab): each K step prefetches the line
// after its micro-tile's A elements into the L2 (prefetcht1), the next row blocks' line at that
// step; a plain A, read along K, has no such prefetch. Results match with row tails (M = 13,
// 37), a one-row M and splits of the rows and columns.
TEST(MatMulTest, AReadAcrossKInPlacePrefetchesTheNextLineAlongM) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const CodegenTarget target = TargetFor(isa);
    ir::TileConfig config;
    config.mr = 8;
    config.nr_vectors = 2;
    config.unroll = 4;
    MatMulOptions o;
    o.transpose_a = true;
    o.config = config;
    const std::string name = absl::StrCat("mm_a_across_k_", device::IsaName(isa));
    const ir::Kernel across = MatMulKernel(o, name);
    o.transpose_a = false;
    const ir::Kernel along = MatMulKernel(o, name + "_plain");
    const std::string with = KernelAssembly(across, target);
    // The full micro-tile's K loop, unrolled 4 times: a prefetch per K step.
    EXPECT_GE(CountOf(with, "prefetcht1"), 4) << name << "\n" << with;
    EXPECT_EQ(CountOf(KernelAssembly(along, target), "prefetcht1"), 0) << name;
    std::vector<MatMulCase> cases = {{2, 13, 70, 64}, {4, 37, 32, 128}, {1, 1, 33, 20}};
    for (MatMulCase& mc : cases) mc.transpose_a = true;
    CheckKernelsOnCases(isa, {&across}, cases, 5, 16, 0);
  }
}

// Tiles of several row blocks prefetch the next K block's panel into the L2 (prefetcht1),
// spread over their row blocks; those of at most 4 (tile_rows 24 over mr 6) also prefetch
// ahead of their loads (prefetcht0), those of more (48 rows) do not. K = 70 over kc = 16 has a
// short last K block, after which the next column block's first one is fetched; M = 13 ends
// in a one-row tail.
TEST(MatMulTest, SeveralRowBlocksPrefetchTheNextKBlock) {
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const CodegenTarget target = TargetFor(isa);
    const int block = 2 * target.f32_lanes();
    for (int64_t tile_rows : {24, 48}) {
      ir::TileConfig config = SixRowConfig(2, 8192, 4);
      config.prefetch_b = 4096;
      config.tile_rows = tile_rows;
      MatMulOptions o;
      o.broadcast_b = true;
      o.config = config;
      o.prepacked_block = block;
      const std::string name =
          absl::StrCat("mm_prefetch_next_", device::IsaName(isa), "_", tile_rows);
      const ir::Kernel k = MatMulKernel(o, name);
      const std::string assembly = KernelAssembly(k, target);
      EXPECT_GE(CountOf(assembly, "prefetcht1"), 1) << name << "\n" << assembly;
      EXPECT_EQ(CountOf(assembly, "prefetcht0") > 0, tile_rows == 24) << name;
      if (isa == Isa::kAvx512 && HostTarget().isa != Isa::kAvx512) continue;
      absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
      ASSERT_TRUE(c.ok()) << c.status();
      for (MatMulCase mc : std::vector<MatMulCase>{{1, 13, 300, 70}, {1, 48, 64, 64}}) {
        mc.broadcast_b = true;
        mc.prepacked_block = block;
        CheckMatMul(c->entry, mc, false, 0, 0, name, config.panel_bytes);
        CheckMatMul(c->entry, mc, false, tile_rows, block, name + " split rows x block",
                    config.panel_bytes);
        CheckMatMul(c->entry, mc, false, 7, 11, name + " split 7x11", config.panel_bytes);
      }
    }
  }
}

// K blocks of 64 to 256 floats in tasks of several row blocks prefetch the next row block's A
// rows (prefetcht0; nothing else here prefetches: B is not prepacked). K blocks of 512 or 32,
// and tasks of one row block, do not. The prefetching kernels match the reference, the last
// row block's prefetches falling past A.
TEST(MatMulTest, ShortKBlocksPrefetchTheNextRowBlockOfA) {
  struct Variant {
    int64_t kc, tile_rows;
    bool prefetch;
  };
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const CodegenTarget target = TargetFor(isa);
    for (const Variant& v : {Variant{256, 24, true}, Variant{64, 24, true}, Variant{512, 24, false},
                             Variant{32, 24, false}, Variant{256, 6, false}}) {
      ir::TileConfig config = SixRowConfig(2, 0, 4);
      config.kc = v.kc;
      config.tile_rows = v.tile_rows;
      MatMulOptions o;
      o.config = config;
      const std::string name =
          absl::StrCat("mm_prefetch_a_", device::IsaName(isa), "_kc", v.kc, "_rows", v.tile_rows);
      const ir::Kernel k = MatMulKernel(o, name);
      const std::string assembly = KernelAssembly(k, target);
      EXPECT_EQ(CountOf(assembly, "prefetcht0") > 0, v.prefetch) << name << "\n" << assembly;
      if (!v.prefetch || (isa == Isa::kAvx512 && HostTarget().isa != Isa::kAvx512)) continue;
      absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
      ASSERT_TRUE(c.ok()) << c.status();
      for (const MatMulCase& mc :
           std::vector<MatMulCase>{{1, 29, 70, 300}, {2, 48, 64, 256}, {1, 13, 40, 64}}) {
        CheckMatMul(c->entry, mc, false, 0, 0, name, 1 << 20);
        CheckMatMul(c->entry, mc, false, v.tile_rows, 2 * target.f32_lanes(),
                    name + " split rows x block", 1 << 20);
        CheckMatMul(c->entry, mc, false, 7, 11, name + " split 7x11", 1 << 20);
      }
    }
  }
}

TEST(MatMulTest, NegativeOrHugePrefetchIsInvalidArgument) {
  // The kernel with `config` is refused with `message` after its name.
  auto expect_refused = [](const ir::TileConfig& config, const std::string& message) {
    ir::Kernel k = MatMulKernel(MatMulOptions{}, "mm_bad_prefetch");
    k.config = config;
    absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(Isa::kAvx512), k);
    ASSERT_FALSE(c.ok()) << message;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(c.status().message(), "kernel 'mm_bad_prefetch': " + message);
  };
  const ir::TileConfig base = MatMulKernel(MatMulOptions{}, "mm_bad_prefetch").config;
  for (int64_t bytes : {int64_t{-1}, ir::TileConfig::kMaxPrefetchBytes + 1}) {
    ir::TileConfig c = base;
    c.prefetch_b = bytes;
    expect_refused(c, absl::StrCat("config.prefetch_b ", bytes, " not in [0, 1048576]"));
  }
  for (int64_t rows : {int64_t{-1}, ir::TileConfig::kMaxPackPrefetchRows + 1}) {
    ir::TileConfig c = base;
    c.pack_prefetch_rows = rows;
    expect_refused(c, absl::StrCat("config.pack_prefetch_rows ", rows, " not in [0, 1024]"));
  }
}

// A kernel whose prepacked B has other column blocks than its micro-tile is refused, not run.
TEST(MatMulTest, PrepackedBlockOtherThanTheMicroTileIsInvalidArgument) {
  ir::Kernel k = MatMulKernel(MatMulOptions{}, "mm_packed_mismatch");
  k.b_packed = k.num_buffers++;
  k.b_packed_block = 48;  // nr_vectors 2 x 16 lanes = 32 on AVX-512
  absl::StatusOr<CompiledObject> c = CompileKernel(CompileOnlyEngineFor(Isa::kAvx512), k);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c.status().message(),
            "kernel mm_packed_mismatch: B is prepacked in blocks of 48 columns, but the tile "
            "config takes 2 x 16 (nr_vectors x vector width)");
  k.b_packed_block = 32;
  EXPECT_TRUE(CompileKernel(CompileOnlyEngineFor(Isa::kAvx512), k).ok());
}

TEST(MatMulTest, TransposedBZeroExtents) {
  MatMulOptions o;
  o.b_layout = BLayout::kNK;
  o.epilogue = true;
  absl::StatusOr<CompiledObject> c =
      CompileKernel(EngineFor(Isa::kAvx512), MatMulKernel(o, "mmt_zero"));
  ASSERT_TRUE(c.ok()) << c.status();
  MatMulCase k0{2, 3, 17, 0};
  k0.b_layout = BLayout::kNK;
  CheckMatMul(c->entry, k0, true, 0, 0, "k0");  // out = gelu(0 + bias) + residual
  for (MatMulCase mc : std::vector<MatMulCase>{{1, 0, 5, 3}, {1, 5, 0, 3}, {0, 5, 5, 3}}) {
    mc.b_layout = BLayout::kNK;
    CheckMatMul(c->entry, mc, true, 0, 0, "empty");
  }
}

TEST(MatMulTest, TransposedBAssemblyUsesVectorFma) {
  MatMulOptions o;
  o.b_layout = BLayout::kNK;
  ir::Kernel k = MatMulKernel(o, "mmt_asm");
  // The dot-product form (horizontal sums), not the broadcast form with gathered B.
  EXPECT_NE(KernelIr(k, TargetFor(Isa::kAvx2)).find("llvm.vector.reduce.fadd"), std::string::npos);
  EXPECT_EQ(KernelIr(MatMulKernel(MatMulOptions{}, "mm_ir"), TargetFor(Isa::kAvx2))
                .find("llvm.vector.reduce.fadd"),
            std::string::npos);
  const std::string avx2 = KernelAssembly(k, TargetFor(Isa::kAvx2));
  EXPECT_TRUE(std::regex_search(avx2, std::regex(R"(vfmadd\w*ps\s+[^\n]*%ymm)"))) << avx2;
  EXPECT_EQ(avx2.find("zmm"), std::string::npos);
  const std::string sse2 = KernelAssembly(k, TargetFor(Isa::kSse2));
  EXPECT_EQ(sse2.find("vfmadd"), std::string::npos);
  EXPECT_EQ(sse2.find("ymm"), std::string::npos);
  EXPECT_NE(sse2.find("mulps"), std::string::npos);
}

}  // namespace
}  // namespace pto::jit::testing
