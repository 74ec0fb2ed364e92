// The default tile-config policy on hand-made kernels and devices: the matmul micro-tile per
// register file, K blocks, grains and prefetching, the loop kinds' unroll, grain, prefetch and
// streaming stores, and that every micro-tile it picks fits the register file.
#include "jit/passes/default_tile_configs.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace pto::jit {
namespace {

device::DeviceInfo Device(device::Isa isa, int vector_registers) {
  device::DeviceInfo d;
  d.isa = isa;
  d.vector_bits = isa == device::Isa::kAvx512 ? 512 : isa == device::Isa::kAvx2 ? 256 : 128;
  d.vector_registers = vector_registers;
  d.l2_bytes = 2 << 20;
  d.cores = 2;
  return d;
}
const device::DeviceInfo kAvx512 = Device(device::Isa::kAvx512, 32);
const device::DeviceInfo kAvx2 = Device(device::Isa::kAvx2, 16);
// An AVX-512 core with a 1 MiB L2 (Zen 4 and 5).
const device::DeviceInfo kAvx512SmallL2 = [] {
  device::DeviceInfo d = Device(device::Isa::kAvx512, 32);
  d.l2_bytes = 1 << 20;
  return d;
}();
// AMD and Intel cores the family rules tell apart (vendor and family as CPUID reports them).
device::DeviceInfo WithFamily(device::DeviceInfo d, const char* vendor, int family) {
  d.vendor = vendor;
  d.family = family;
  return d;
}
const device::DeviceInfo kZen4 = WithFamily(kAvx512SmallL2, "AuthenticAMD", 25);
const device::DeviceInfo kZen5 = WithFamily(kAvx512SmallL2, "AuthenticAMD", 26);
const device::DeviceInfo kIntelAvx512 = WithFamily(kAvx512SmallL2, "GenuineIntel", 6);
const device::DeviceInfo kZen3 = WithFamily(kAvx2, "AuthenticAMD", 25);

ir::SymExpr Dim(int64_t extent) {
  return extent < 0 ? ir::SymExpr::Symbol(0) : ir::SymExpr(extent);
}

// An unbatched M x K x N matmul (M < 0: symbolic), B stored [K, N]. With `batch` > 0 it has a
// batch dim whose entries share B (`shared_b`) or read a B of their own.
ir::Kernel MatMul(int64_t m, int64_t k, int64_t n, int64_t batch = 0, bool shared_b = true) {
  ir::Kernel kernel;
  kernel.kind = ir::KernelKind::kMatMul;
  kernel.k = ir::SymExpr(k);
  kernel.a = 0;
  kernel.b = 1;
  kernel.num_buffers = 3;
  const ir::SymExpr zero(0), one(1);
  if (batch > 0) {
    kernel.domain = {ir::SymExpr(batch), Dim(m), ir::SymExpr(n)};
    kernel.accesses = {
        {0, zero, {Dim(m) * ir::SymExpr(k), ir::SymExpr(k), zero, one}},
        {1, zero, {shared_b ? zero : ir::SymExpr(k * n), zero, one, ir::SymExpr(n)}}};
  } else {
    kernel.domain = {Dim(m), ir::SymExpr(n)};
    kernel.accesses = {{0, zero, {ir::SymExpr(k), zero, one}},
                       {1, zero, {zero, one, ir::SymExpr(n)}}};
  }
  kernel.output = {{ir::ExprOp::kAcc}};
  return kernel;
}

ir::TileConfig Default(const ir::Kernel& kernel, const device::DeviceInfo& device,
                       bool constant_b = false) {
  KernelContext context;
  context.constant_b = constant_b;
  return DefaultTileConfig(kernel, context, device);
}

TEST(DefaultTileConfigs, MatMulMicroTilePerRegisterFile) {
  struct Expect {
    std::string name;
    const device::DeviceInfo* device;
    int64_t m, k, n;
    bool constant_b;
    int mr, nr_vectors, unroll;
  };
  const Expect cases[] = {
      // 32 registers: few rows (a static M <= 48) take 8 rows when M is a multiple of 8
      // (8 x 3, or 8 x 2 over a constant B below 24 rows), else 4 x 4; others 6 x 4 over at
      // least 4 vectors of columns, 8 x 3 over 3 (the last one partial or whole), 8 x 2 over
      // fewer.
      {"avx512 8 rows", &kAvx512, 8, 768, 768, false, 8, 3, 4},
      {"avx512 8 rows, constant B", &kAvx512, 8, 768, 768, true, 8, 2, 4},
      {"avx512 32 rows, constant B", &kAvx512, 32, 768, 768, true, 8, 3, 4},
      {"avx512 32 rows, constant B, N not in blocks of 48", &kAvx512, 32, 768, 4096, true, 8, 2, 4},
      {"avx512 36 rows", &kAvx512, 36, 768, 768, false, 4, 4, 4},
      {"avx512 many rows", &kAvx512, 512, 512, 512, false, 6, 4, 4},
      {"avx512 symbolic rows", &kAvx512, -1, 768, 768, false, 6, 4, 4},
      {"avx512 few columns", &kAvx512, 512, 512, 32, false, 8, 2, 4},
      {"avx512 2 vectors and a tail", &kAvx512, 48, 96, 40, false, 8, 3, 4},
      {"avx512 3 vectors", &kAvx512, 512, 64, 48, false, 8, 3, 4},
      {"avx512 3 vectors and a tail", &kAvx512, 512, 64, 49, false, 8, 2, 4},
      {"avx512 2 vectors and a tail, few rows", &kAvx512, 23, 29, 47, false, 8, 3, 4},
      // 16 registers: 4 x 2 for few rows, 6 x 2 otherwise, the K loop not unrolled.
      {"avx2 8 rows", &kAvx2, 8, 768, 768, false, 4, 2, 1},
      {"avx2 1 row, constant B", &kAvx2, 1, 768, 768, true, 4, 2, 1},
      {"avx2 many rows", &kAvx2, 512, 512, 512, false, 6, 2, 1},
  };
  for (const Expect& e : cases) {
    SCOPED_TRACE(e.name);
    const ir::TileConfig c = Default(MatMul(e.m, e.k, e.n), *e.device, e.constant_b);
    EXPECT_EQ(c.mr, e.mr);
    EXPECT_EQ(c.nr_vectors, e.nr_vectors);
    EXPECT_EQ(c.unroll, e.unroll);
    EXPECT_EQ(c.vector_width, e.device->f32_lanes());
    EXPECT_TRUE(c.pack_b);
    EXPECT_EQ(c.panel_bytes, e.device->l2_bytes / 2);
  }
}

// On AMD's AVX-512 cores the 8 x 3 tile's K loop is unrolled twice and the 6 x 4 tile's not at
// all (4 times spilled accumulators inside the loop); other tiles, and other vendors, keep 4.
TEST(DefaultTileConfigs, TwentyFourAccumulatorTilesUnrollLessOnAmd) {
  device::DeviceInfo amd = kAvx512SmallL2;
  amd.vendor = "AuthenticAMD";
  device::DeviceInfo intel = kAvx512;
  intel.vendor = "GenuineIntel";
  const ir::TileConfig eight_by_three = Default(MatMul(32, 3072, 768), amd, /*constant_b=*/true);
  EXPECT_EQ(eight_by_three.mr, 8);
  EXPECT_EQ(eight_by_three.nr_vectors, 3);
  EXPECT_EQ(eight_by_three.unroll, 2);
  EXPECT_EQ(Default(MatMul(32, 3072, 768), intel, true).unroll, 4);
  const ir::TileConfig six_by_four = Default(MatMul(512, 512, 512), amd);
  EXPECT_EQ(six_by_four.mr, 6);
  EXPECT_EQ(six_by_four.nr_vectors, 4);
  EXPECT_EQ(six_by_four.unroll, 1);
  EXPECT_EQ(Default(MatMul(512, 512, 512), intel).unroll, 4);
  const ir::TileConfig eight_by_two = Default(MatMul(23, 29, 31), amd);
  EXPECT_EQ(eight_by_two.mr, 8);
  EXPECT_EQ(eight_by_two.nr_vectors, 2);
  EXPECT_EQ(eight_by_two.unroll, 4);
}

// Over 3 vectors of columns B stored [K, N] takes 8 x 3; stored [N, K] (the dot-product form,
// a linear layer's weight) it keeps 8 x 2, whose column blocks a constant B is prepacked in.
TEST(DefaultTileConfigs, ThreeVectorsOfColumnsTakeEightByThreeUnlessBIsStoredNByK) {
  const ir::TileConfig kn = Default(MatMul(33, 64, 40), kAvx512, /*constant_b=*/true);
  EXPECT_EQ(kn.mr, 8);
  EXPECT_EQ(kn.nr_vectors, 3);
  ir::Kernel nk = MatMul(33, 64, 40);
  nk.accesses[1].strides = {ir::SymExpr(0), ir::SymExpr(64), ir::SymExpr(1)};  // B[n, k]
  ASSERT_TRUE(ir::MatMulDotForm(nk));
  const ir::TileConfig dot = Default(nk, kAvx512, /*constant_b=*/true);
  EXPECT_EQ(dot.mr, 8);
  EXPECT_EQ(dot.nr_vectors, 2);
}

// Output lines are prefetched for writing where the K loop is short (at most 128 steps) and the
// output larger than the L1 (32 KiB here): 64 x 64 fits, and K = 129 is long.
TEST(DefaultTileConfigs, ShortKLoopsOverOutputsBeyondTheL1PrefetchTheirOutput) {
  struct Expect {
    int64_t m, k, n, batch;
    bool prefetch;
  };
  const Expect cases[] = {
      {384, 64, 384, 0, true}, {128, 27, 128, 0, true},   {-1, 64, 64, 0, true},
      {128, 32, 128, 8, true}, {128, 128, 128, 0, true},  {64, 64, 64, 0, false},
      {23, 29, 31, 0, false},  {384, 129, 384, 0, false}, {1024, 1024, 1024, 0, false},
      {17, 33, 65, 0, false},
  };
  for (const Expect& e : cases) {
    for (const device::DeviceInfo& d : {kAvx512, kAvx2}) {
      const ir::TileConfig c = Default(MatMul(e.m, e.k, e.n, e.batch), d);
      EXPECT_EQ(c.prefetch_output, e.prefetch) << e.m << "x" << e.k << "x" << e.n << " batch "
                                               << e.batch << " on " << device::IsaName(d.isa);
    }
  }
  // A symbolic K: unknown length, no prefetch.
  ir::Kernel symbolic_k = MatMul(384, 64, 384);
  symbolic_k.k = ir::SymExpr::Symbol(1);
  EXPECT_FALSE(Default(symbolic_k, kAvx512).prefetch_output);
}

TEST(DefaultTileConfigs, ShortKLoopsOnZen4TakeFourRowsWhenMIsAMultipleOfFour) {
  struct Expect {
    int64_t m, k, n, batch;
    int mr;
  };
  const Expect cases[] = {
      {64, 64, 64, 0, 4},   {384, 64, 384, 0, 4},  {128, 27, 128, 0, 4}, {200, 64, 200, 0, 4},
      {128, 32, 128, 8, 4}, {2048, 64, 512, 0, 4}, {128, 65, 128, 0, 6}, {128, 128, 128, 0, 6},
      {17, 33, 65, 0, 6},   {102, 64, 128, 0, 6},  {-1, 64, 128, 0, 6},  {1024, 1024, 1024, 0, 6},
  };
  for (const Expect& e : cases) {
    const ir::TileConfig c = Default(MatMul(e.m, e.k, e.n, e.batch), kZen4);
    EXPECT_EQ(c.mr, e.mr) << e.m << "x" << e.k << "x" << e.n << " batch " << e.batch;
    EXPECT_EQ(c.nr_vectors, 4) << e.m << "x" << e.k << "x" << e.n;
    // The AMD unroll of the 6 x 4 tile stays with the 4 x 4 one.
    EXPECT_EQ(c.unroll, 1) << e.m << "x" << e.k << "x" << e.n;
    // Row tasks are whole micro-tiles of the tile taken.
    if (e.m > 0 && c.tile_rows < e.m) {
      EXPECT_EQ(c.tile_rows % c.mr, 0) << e.m;
    }
  }
  // Zen 5 (family 26), Zen 3 (family 25 without AVX-512: 16 registers, no 6 x 4) and Intel
  // keep the 6 x 4 tile.
  for (const device::DeviceInfo* d : {&kZen5, &kIntelAvx512}) {
    EXPECT_EQ(Default(MatMul(64, 64, 64), *d).mr, 6) << d->vendor << " family " << d->family;
  }
  EXPECT_EQ(Default(MatMul(64, 64, 64), kZen3).mr, Default(MatMul(64, 64, 64), kAvx2).mr);
  // A symbolic K: unknown length, 6 x 4.
  ir::Kernel symbolic_k = MatMul(64, 64, 64);
  symbolic_k.k = ir::SymExpr::Symbol(1);
  EXPECT_EQ(Default(symbolic_k, kZen4).mr, 6);
}

// On Zen 4 a matmul that packs a B stored [K, N] prefetches 16 rows ahead of the copy; a
// constant B (prepacked by the plan) and a B stored [N, K] (the dot-product form, packed by
// transposing) do not, nor do Zen 5, Zen 3 and Intel.
TEST(DefaultTileConfigs, PackingBOnZen4PrefetchesRowsAheadOfTheCopy) {
  for (const ir::Kernel& k : {MatMul(256, 256, 256), MatMul(128, 2048, 512), MatMul(-1, 64, 512),
                              MatMul(128, 128, 32, 8, /*shared_b=*/true)}) {
    const ir::TileConfig c = Default(k, kZen4);
    EXPECT_TRUE(c.pack_b);
    EXPECT_EQ(c.pack_prefetch_rows, 16) << k.domain.size() << "-d, K " << k.k.constant();
  }
  EXPECT_EQ(Default(MatMul(256, 256, 256), kZen4, /*constant_b=*/true).pack_prefetch_rows, 0);
  ir::Kernel nk = MatMul(256, 256, 256);
  nk.accesses[1].strides = {ir::SymExpr(0), ir::SymExpr(256), ir::SymExpr(1)};  // B[n, k]
  ASSERT_TRUE(ir::MatMulDotForm(nk));
  EXPECT_EQ(Default(nk, kZen4).pack_prefetch_rows, 0);
  for (const device::DeviceInfo* d : {&kZen5, &kIntelAvx512, &kZen3}) {
    EXPECT_EQ(Default(MatMul(256, 256, 256), *d).pack_prefetch_rows, 0)
        << d->vendor << " family " << d->family;
  }
}

// On Zen 4 (512-bit operations as two 256-bit halves) matmuls take a narrow tail vector;
// Zen 5, Intel and Zen 3 do not.
TEST(DefaultTileConfigs, MatMulsOnZen4TakeANarrowTailVector) {
  for (const ir::Kernel& k : {MatMul(48, 96, 40), MatMul(100, 100, 100), MatMul(-1, 64, 512),
                              MatMul(128, 128, 32, 8, /*shared_b=*/true)}) {
    EXPECT_TRUE(Default(k, kZen4).narrow_tail) << k.domain.size() << "-d, K " << k.k.constant();
  }
  EXPECT_TRUE(Default(MatMul(8, 768, 40), kZen4, /*constant_b=*/true).narrow_tail);
  for (const device::DeviceInfo* d : {&kZen5, &kIntelAvx512, &kZen3}) {
    EXPECT_FALSE(Default(MatMul(48, 96, 40), *d).narrow_tail)
        << d->vendor << " family " << d->family;
  }
}

TEST(DefaultTileConfigs, MatMulKBlocksGrainsAndPrefetch) {
  struct Expect {
    std::string name;
    const device::DeviceInfo* device;
    ir::Kernel kernel;
    bool constant_b;
    int64_t kc, tile_rows, tile_cols, prefetch_b;
  };
  const Expect cases[] = {
      // Whole rows (M <= 1024) over many columns: 2 blocks of columns per task, K blocks of
      // 512; a B beyond the L2 (768 x 768 floats > 2 MiB) is prefetched.
      {"avx512 8 rows", &kAvx512, MatMul(8, 768, 768), false, 512, 8, 96, 4096},
      // One row block over a constant B: K whole.
      {"avx512 8 rows, constant B", &kAvx512, MatMul(8, 768, 768), true, 0, 8, 64, 4096},
      // 16 to 48 rows: one block of columns per task.
      {"avx512 36 rows", &kAvx512, MatMul(36, 768, 768), false, 512, 36, 64, 4096},
      {"avx512 512 rows", &kAvx512, MatMul(512, 512, 512), false, 512, 512, 128, 0},
      // Whole rows over a constant B within the L2 (128 x 512 floats): the rows are the split,
      // one task per core over all columns, as for the few-column kernels around it; a constant
      // B beyond the L2 keeps the columns as the split (each task streams its part of B).
      {"avx512 128 rows, constant B within the L2", &kAvx512, MatMul(128, 128, 512), true, 512, 66,
       512, 0},
      {"avx512 128 rows, constant B beyond the L2", &kAvx512, MatMul(128, 768, 768), true, 512, 128,
       128, 4096},
      // Over a constant B, 512 rows or more: the rows split as for few columns (4 tasks of 258
      // rows), column blocks kept.
      {"avx512 1024 rows, constant B", &kAvx512, MatMul(1024, 256, 512), true, 512, 258, 128, 0},
      // A longer or symbolic M: tasks of 384 rows; a symbolic M over few columns 16 row blocks.
      {"avx512 symbolic rows", &kAvx512, MatMul(-1, 768, 768), false, 512, 384, 128, 4096},
      {"avx512 symbolic rows, few columns", &kAvx512, MatMul(-1, 512, 32), false, 512, 128, 64, 0},
      // A static M of long rows over at most 512 columns of a B that is not constant: tasks
      // over all of N, rows split evenly (6 tasks of 342); 1024 columns or 16 registers keep
      // tasks of 384 rows over blocks of columns, and a constant B splits the rows evenly over
      // blocks of columns.
      {"avx512 long rows, 512 columns", &kAvx512, MatMul(2048, 128, 512), false, 512, 342, 512, 0},
      {"avx512 long rows, 1024 columns", &kAvx512, MatMul(2048, 128, 1024), false, 512, 384, 128,
       0},
      {"avx512 long rows, 512 columns, constant B", &kAvx512, MatMul(2048, 128, 512), true, 512,
       342, 128, 0},
      {"avx2 long rows, 512 columns", &kAvx2, MatMul(2048, 128, 512), false, 256, 384, 64, 0},
      // Few columns, B packed per task, K >= 128: one task per core over all of N.
      {"avx512 few columns", &kAvx512, MatMul(512, 512, 32), false, 512, 256, 32, 0},
      // Batch entries that share B count as one matmul of batch x M rows (K blocks of 512);
      // entries with a B of their own keep 256. Either way the rows are the split.
      {"avx512 batch sharing B", &kAvx512, MatMul(64, 64, 128, 4, true), false, 512, 66, 128, 0},
      {"avx512 batch, B per entry", &kAvx512, MatMul(64, 64, 128, 4, false), false, 256, 66, 128,
       0},
      // A 1 MiB L2: K blocks of 256 where tasks pack B, unless K is one block of 512.
      {"avx512 small L2, long K", &kAvx512SmallL2, MatMul(512, 2048, 512), false, 256, 512, 128,
       4096},
      {"avx512 small L2, K of one block", &kAvx512SmallL2, MatMul(512, 512, 512), false, 512, 512,
       128, 0},
      {"avx512 small L2, symbolic rows", &kAvx512SmallL2, MatMul(-1, 768, 768), false, 256, 384,
       128, 4096},
      {"avx512 small L2, constant B", &kAvx512SmallL2, MatMul(32, 4096, 4096), true, 512, 32, 32,
       4096},
      // 16 registers: K blocks of 256, 4 blocks of columns per task.
      {"avx2 8 rows", &kAvx2, MatMul(8, 768, 768), false, 256, 8, 64, 4096},
      {"avx2 512 rows", &kAvx2, MatMul(512, 512, 512), false, 256, 512, 64, 0},
  };
  for (const Expect& e : cases) {
    SCOPED_TRACE(e.name);
    const ir::TileConfig c = Default(e.kernel, *e.device, e.constant_b);
    EXPECT_EQ(c.kc, e.kc);
    EXPECT_EQ(c.tile_rows, e.tile_rows);
    EXPECT_EQ(c.tile_cols, e.tile_cols);
    EXPECT_EQ(c.prefetch_b, e.prefetch_b);
  }
}

// Every micro-tile the policy picks fits the device's vector registers.
TEST(DefaultTileConfigs, MatMulMicroTilesFitTheRegisterFile) {
  const device::DeviceInfo devices[] = {Device(device::Isa::kSse2, 8),
                                        Device(device::Isa::kSse2, 16), kAvx2, kAvx512};
  for (const device::DeviceInfo& device : devices) {
    for (int64_t m : {-1, 1, 4, 8, 16, 24, 36, 48, 64, 512, 2048}) {
      for (int64_t n : {8, 32, 64, 128, 768, 4096}) {
        for (bool constant_b : {false, true}) {
          const ir::TileConfig c = Default(MatMul(m, 256, n), device, constant_b);
          EXPECT_LE(ir::MatMulMicroTileRegisters(c.mr, c.nr_vectors), device.vector_registers)
              << absl::StrCat(device::IsaName(device.isa), " with ", device.vector_registers,
                              " registers, ", m, "x256x", n, constant_b ? ", constant B" : "", ": ",
                              c.mr, " x ", c.nr_vectors);
        }
      }
    }
  }
}

// Fields the policy does not decide keep the kernel's values.
TEST(DefaultTileConfigs, KeepsFieldsItDoesNotDecide) {
  ir::Kernel kernel = MatMul(512, 512, 512);
  kernel.config.loop_order = ir::LoopOrder::kRowBlocksOuter;
  kernel.config.mc = 48;
  kernel.config.prefetch_inputs = 1024;
  const ir::TileConfig c = Default(kernel, kAvx512);
  EXPECT_EQ(c.loop_order, ir::LoopOrder::kRowBlocksOuter);
  EXPECT_EQ(c.mc, 48);
  EXPECT_EQ(c.prefetch_inputs, 1024);
}

ir::Kernel Loop(ir::KernelKind kind, std::vector<ir::ExprNode> output) {
  ir::Kernel kernel;
  kernel.kind = kind;
  kernel.domain = {ir::SymExpr(64), ir::SymExpr(1024)};
  kernel.output = std::move(output);
  return kernel;
}

TEST(DefaultTileConfigs, LoopKindsUnrollGrainAndPrefetch) {
  const std::vector<ir::ExprNode> add = {
      {ir::ExprOp::kLoad, -1, -1, 0}, {ir::ExprOp::kLoad, -1, -1, 1}, {ir::ExprOp::kAdd, 0, 1}};
  const std::vector<ir::ExprNode> gelu = {{ir::ExprOp::kLoad, -1, -1, 0},
                                          {ir::ExprOp::kGeluErf, 0}};
  const ir::TileConfig plain = Default(Loop(ir::KernelKind::kElementwise, add), kAvx2);
  EXPECT_EQ(plain.vector_width, 8);
  EXPECT_EQ(plain.unroll, 4);
  EXPECT_EQ(plain.tile_rows, 1);
  EXPECT_EQ(plain.tile_cols, 1 << 14);
  EXPECT_EQ(plain.prefetch_inputs, 0);
  // A transcendental prefetches its streamed inputs 4096 bytes ahead.
  EXPECT_EQ(Default(Loop(ir::KernelKind::kElementwise, gelu), kAvx2).prefetch_inputs, 4096);

  // A reduce along the last dim (rows of 1024) takes the column grain; one down the columns
  // (axis 0 of [64, 1024]: a bias gradient) the columns that make 16384 elements, in blocks of
  // unroll x vector width, so a few hundred columns still split across threads.
  ir::Kernel rows = Loop(ir::KernelKind::kReduce, {{ir::ExprOp::kAcc}});
  rows.axis = 1;
  const ir::TileConfig reduce = Default(rows, kAvx512);
  EXPECT_EQ(reduce.vector_width, 16);
  EXPECT_EQ(reduce.unroll, 2);
  EXPECT_EQ(reduce.tile_rows, 1);
  EXPECT_EQ(reduce.tile_cols, 1 << 14);
  ir::Kernel columns = Loop(ir::KernelKind::kReduce, {{ir::ExprOp::kAcc}});
  EXPECT_EQ(Default(columns, kAvx512).tile_cols, 16384 / 64);
  columns.domain = {ir::SymExpr(2048), ir::SymExpr(512)};
  EXPECT_EQ(Default(columns, kAvx512).tile_cols, 32);  // 8 columns, rounded up to 2 x 16
  EXPECT_EQ(Default(columns, kAvx2).tile_cols, 16);
  columns.domain = {ir::SymExpr(1), ir::SymExpr(8)};
  EXPECT_EQ(Default(columns, kAvx2).tile_cols, 1 << 14);  // never above the column grain
  columns.domain = {ir::SymExpr::Symbol(0), ir::SymExpr(512)};
  EXPECT_EQ(Default(columns, kAvx2).tile_cols, 1 << 14);  // a symbolic extent: the grain

  const ir::TileConfig row = Default(Loop(ir::KernelKind::kRowOp, {{ir::ExprOp::kAcc}}), kAvx2);
  EXPECT_EQ(row.unroll, 4);
  EXPECT_EQ(row.tile_rows, 1);
  EXPECT_EQ(row.tile_cols, 0);
  EXPECT_EQ(row.prefetch_inputs, 0);

  // scatter_add: blocks of 256 rows, each scanning the indices once.
  const ir::TileConfig scatter =
      Default(Loop(ir::KernelKind::kScatterAdd, {{ir::ExprOp::kAcc}}), kAvx2);
  EXPECT_EQ(scatter.unroll, 2);
  EXPECT_EQ(scatter.tile_rows, 256);
  EXPECT_EQ(scatter.tile_cols, 1 << 14);
}

// A copy that stores across its rows (a transpose) takes 64 x 128 tasks, so the lines it
// scatters into stay in the L1 from row to row, and never streams: its stores are scalar. With
// more rows it takes up to 256 of them in tasks of the same size (its stores run along them);
// a copy loading across its rows keeps 64 x 128.
TEST(DefaultTileConfigs, TransposingCopiesTakeBlocksOfColumns) {
  ir::Kernel copy = Loop(ir::KernelKind::kElementwise, {{ir::ExprOp::kLoad, -1, -1, 0}});
  copy.accesses = {{.strides = {ir::SymExpr(1024), ir::SymExpr(1)}},
                   {.strides = {ir::SymExpr(1), ir::SymExpr(64)}}};
  copy.stores = {{.access = 1, .value = 0}};
  KernelContext context;
  context.output_bytes = int64_t{1} << 30;
  const ir::TileConfig across = DefaultTileConfig(copy, context, kAvx2);
  EXPECT_EQ(across.tile_rows, 64);
  EXPECT_EQ(across.tile_cols, 128);
  EXPECT_FALSE(across.streaming_stores);
  ir::Kernel tall = copy;
  tall.domain = {ir::SymExpr(2048), ir::SymExpr(512)};
  const ir::TileConfig tall_across = DefaultTileConfig(tall, context, kAvx2);
  EXPECT_EQ(tall_across.tile_rows, 256);
  EXPECT_EQ(tall_across.tile_cols, 32);
  tall.domain = {ir::SymExpr(128), ir::SymExpr(512)};
  EXPECT_EQ(DefaultTileConfig(tall, context, kAvx2).tile_rows, 128);
  EXPECT_EQ(DefaultTileConfig(tall, context, kAvx2).tile_cols, 64);
  // Loads across (the source read down its columns): 64 x 128 at any height.
  tall.domain = {ir::SymExpr(2048), ir::SymExpr(512)};
  tall.accesses = {{.strides = {ir::SymExpr(1), ir::SymExpr(2048)}},
                   {.strides = {ir::SymExpr(512), ir::SymExpr(1)}}};
  ASSERT_EQ(ir::TransposingCopyOf(tall), ir::TransposingCopy::kLoadsAcross);
  EXPECT_EQ(DefaultTileConfig(tall, context, kAvx2).tile_rows, 64);
  EXPECT_EQ(DefaultTileConfig(tall, context, kAvx2).tile_cols, 128);
  // The same copy stored along its rows keeps the row grain and streams its large output.
  copy.accesses[1].strides = {ir::SymExpr(1024), ir::SymExpr(1)};
  const ir::TileConfig along = DefaultTileConfig(copy, context, kAvx2);
  EXPECT_EQ(along.tile_rows, 1);
  EXPECT_EQ(along.tile_cols, 1 << 14);
  EXPECT_TRUE(along.streaming_stores);
}

// Outputs of at least 4 x the private caches (L2 x cores: 16 MiB here) stream past the caches;
// smaller ones, outputs of symbolic size and kernels writing no Function output do not.
TEST(DefaultTileConfigs, StreamingStoresForOutputsBeyondTheCaches) {
  const int64_t limit = 4 * kAvx2.l2_bytes * kAvx2.cores;
  for (ir::KernelKind kind :
       {ir::KernelKind::kElementwise, ir::KernelKind::kRowOp, ir::KernelKind::kScatterAdd}) {
    SCOPED_TRACE(static_cast<int>(kind));
    const ir::Kernel kernel = Loop(kind, {{ir::ExprOp::kAcc}});
    auto streams = [&](std::optional<int64_t> output_bytes, const device::DeviceInfo& device) {
      KernelContext context;
      context.output_bytes = output_bytes;
      return DefaultTileConfig(kernel, context, device).streaming_stores;
    };
    EXPECT_TRUE(streams(limit, kAvx2));
    EXPECT_FALSE(streams(limit - 4, kAvx2));
    EXPECT_FALSE(streams(std::nullopt, kAvx2));
    // No cache at all (a device that reports none) still needs an output to stream.
    device::DeviceInfo no_l2 = kAvx2;
    no_l2.l2_bytes = 0;
    EXPECT_FALSE(streams(std::nullopt, no_l2));
    EXPECT_TRUE(streams(0, no_l2));
  }
}

}  // namespace
}  // namespace pto::jit
