// Checked kernels (CodegenOptions::bounds_checks): every kernel kind gives the same bits checked
// as unchecked, on random shapes with tails, and an access past its buffer dies with a message
// naming the kernel, the buffer, the index and the extent.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "device/aligned_buffer.h"
#include "gtest/gtest.h"
#include "jit/codegen/emit_kernel.h"
#include "kernel_builders.h"
#include "kernel_test_util.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "matmul_kernel_builder.h"

namespace pto::jit::testing {
namespace {

using ir::ExprOp;
using ir::SymExpr;

constexpr CodegenOptions kChecked{.bounds_checks = true};

device::Isa HostIsa() { return device::DetectHost().isa; }

SymExpr S(int id) { return SymExpr::Symbol(id); }

// The kernel with these buffer extents (one per slot, named "b<slot>").
ir::Kernel WithExtents(ir::Kernel kernel, const std::vector<SymExpr>& elements) {
  kernel.buffer_extents.clear();
  for (size_t i = 0; i < elements.size(); ++i) {
    kernel.buffer_extents.push_back({elements[i], absl::StrCat("b", i)});
  }
  return kernel;
}

struct Buffers {
  std::vector<device::AlignedBuffer> memory;
  std::vector<float*> pointers;
  std::vector<size_t> bytes;
};

// One buffer per extent at `symbols`, filled with random values from `seed` (at least one
// element each, so that no pointer is null).
Buffers MakeBuffers(const ir::Kernel& kernel, const std::vector<int64_t>& symbols, uint32_t seed) {
  Buffers b;
  for (const ir::BufferExtent& e : kernel.buffer_extents) {
    const int64_t n = std::max<int64_t>(1, e.elements.Evaluate(symbols));
    std::vector<float> values = RandomVector(static_cast<size_t>(n), seed++);
    b.memory.emplace_back(static_cast<size_t>(n) * sizeof(float));
    std::memcpy(b.memory.back().data(), values.data(), values.size() * sizeof(float));
    b.pointers.push_back(static_cast<float*>(b.memory.back().data()));
    b.bytes.push_back(values.size() * sizeof(float));
  }
  return b;
}

std::string Shape(const std::vector<int64_t>& symbols) {
  std::string s;
  for (int64_t v : symbols) absl::StrAppend(&s, s.empty() ? "" : ",", v);
  return "symbols (" + s + ")";
}

// Compiles `kernel` (its extents set) unchecked and checked, runs both on the same random
// buffers at each of `symbol_sets`, over the whole grid and in tiles of each of `tiles`, and
// expects every buffer to hold the same bits after both.
void ExpectCheckedMatchesUnchecked(const ir::Kernel& kernel,
                                   const std::vector<std::vector<int64_t>>& symbol_sets,
                                   const std::vector<std::pair<int64_t, int64_t>>& tiles) {
  absl::StatusOr<CompiledObject> plain = CompileKernel(EngineFor(HostIsa()), kernel);
  ASSERT_TRUE(plain.ok()) << plain.status();
  absl::StatusOr<CompiledObject> checked =
      CompileKernel(CheckedEngineFor(HostIsa()), kernel, kChecked);
  ASSERT_TRUE(checked.ok()) << checked.status();
  const std::array<SymExpr, 2> grid = ir::KernelGrid(kernel);
  const int64_t scratch = KernelScratchBytes(kernel);
  std::vector<std::pair<int64_t, int64_t>> all_tiles = {{0, 0}};
  all_tiles.insert(all_tiles.end(), tiles.begin(), tiles.end());
  for (const std::vector<int64_t>& symbols : symbol_sets) {
    for (auto [t0, t1] : all_tiles) {
      const uint32_t seed = static_cast<uint32_t>(symbols.size() * 131 + t0 * 7 + t1);
      Buffers a = MakeBuffers(kernel, symbols, seed), b = MakeBuffers(kernel, symbols, seed);
      const int64_t rows = grid[0].Evaluate(symbols), cols = grid[1].Evaluate(symbols);
      RunGrid(plain->entry, a.pointers, symbols, rows, cols, t0, t1, scratch);
      RunGrid(checked->entry, b.pointers, symbols, rows, cols, t0, t1, scratch);
      for (size_t i = 0; i < a.memory.size(); ++i) {
        ASSERT_EQ(std::memcmp(a.pointers[i], b.pointers[i], a.bytes[i]), 0)
            << kernel.name << ": buffer " << i << " differs at " << Shape(symbols) << ", tiles "
            << t0 << "x" << t1;
      }
    }
  }
}

// `count` random symbol sets of `dims` values, each in [lo, hi].
std::vector<std::vector<int64_t>> RandomSymbols(int count,
                                                std::vector<std::pair<int64_t, int64_t>> dims,
                                                uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<std::vector<int64_t>> sets;
  for (int i = 0; i < count; ++i) {
    std::vector<int64_t> s;
    for (auto [lo, hi] : dims) s.push_back(std::uniform_int_distribution<int64_t>(lo, hi)(gen));
    sets.push_back(s);
  }
  return sets;
}

// Elementwise: broadcast operands, unrolled and masked tails, streaming stores, prefetches, and
// a transposed read (per-lane loads).
TEST(CheckedKernelTest, ElementwiseMatchesUnchecked) {
  const auto shapes = RandomSymbols(6, {{1, 9}, {1, 77}}, 1);
  ir::Kernel k = BroadcastKernel(S(0), S(1), "ck_ew_bcast");
  k.config.unroll = 3;
  const std::vector<SymExpr> extents = {S(0) * S(1), S(0), S(1), S(0) * S(1)};
  ExpectCheckedMatchesUnchecked(WithExtents(k, extents), shapes, {{2, 5}, {1, 16}});
  k.name = "ck_ew_stream";
  k.config.streaming_stores = true;
  k.config.prefetch_inputs = 256;
  ExpectCheckedMatchesUnchecked(WithExtents(k, extents), shapes, {{3, 7}});

  // out[i, j] = x[j, i] + 1: x read down its columns.
  ir::Kernel t;
  t.kind = ir::KernelKind::kElementwise;
  t.name = "ck_ew_transpose";
  t.num_buffers = 2;
  t.domain = {S(0), S(1)};
  t.accesses = {MakeAccess(0, {1, S(0)}), MakeAccess(1, {S(1), 1})};
  Program p;
  const int v = p.Bin(ExprOp::kAdd, p.Load(0), p.Const(1.f));
  t.output = p.nodes();
  t.stores = {{1, v}};
  ExpectCheckedMatchesUnchecked(WithExtents(t, {S(0) * S(1), S(0) * S(1)}), shapes, {{2, 9}});
}

TEST(CheckedKernelTest, ReduceMatchesUnchecked) {
  const auto shapes = RandomSymbols(4, {{1, 5}, {1, 40}, {1, 21}}, 2);
  for (int axis = 0; axis < 3; ++axis) {
    for (ir::ReduceKind kind : {ir::ReduceKind::kSum, ir::ReduceKind::kMax}) {
      ir::Kernel k = ReduceKernel(axis, kind, 2, absl::StrCat("ck_reduce_", axis, "_", int(kind)));
      SymExpr out = 1;
      for (int d = 0; d < 3; ++d) {
        if (d != axis) out = out * S(d);
      }
      ExpectCheckedMatchesUnchecked(WithExtents(k, {S(0) * S(1) * S(2), out, out}), shapes,
                                    {{1, 3}});
    }
  }
}

// Row ops: symbolic rows, short static rows kept in registers (several rows at a time,
// pipelined), and softmax with streaming stores keeping its exp row in the scratch.
TEST(CheckedKernelTest, RowOpsMatchUnchecked) {
  const auto shapes = RandomSymbols(4, {{1, 3}, {1, 6}, {1, 90}}, 3);
  for (ir::RowOpKind op : {ir::RowOpKind::kSoftmax, ir::RowOpKind::kLogSoftmax,
                           ir::RowOpKind::kLayerNorm, ir::RowOpKind::kRmsNorm}) {
    const std::string name = absl::StrCat("ck_row_", int(op));
    ir::Kernel k = RowKernel(op, 2, name);
    const SymExpr all = S(0) * S(1) * S(2);
    ExpectCheckedMatchesUnchecked(WithExtents(k, {all, S(2), S(2), all}), shapes, {{2, 1}});
    for (int64_t cols : {5, 20, 64}) {  // 1 to 8 vectors: register rows
      ir::Kernel r = RowKernel(op, 1, absl::StrCat(name, "_static", cols));
      r.domain[2] = cols;
      r.accesses[0].strides = {S(1) * cols, cols, 1};
      r.accesses[3].strides = {S(1) * cols, cols, 1};
      const SymExpr rows = S(0) * S(1) * cols;
      ExpectCheckedMatchesUnchecked(WithExtents(r, {rows, cols, cols, rows}),
                                    RandomSymbols(3, {{1, 3}, {1, 9}, {0, 0}}, 4), {{3, 1}});
    }
  }
  // Softmax alone with streaming stores over a static row: exp(x - max) kept in the scratch.
  ir::Kernel s = RowKernel(ir::RowOpKind::kSoftmax, 2, "ck_row_softmax_scratch");
  s.domain[2] = 300;
  s.accesses[0].strides = {S(1) * 300, 300, 1};
  s.accesses[3].strides = {S(1) * 300, 300, 1};
  Program p;
  const int acc = p.Acc();
  s.output = p.nodes();
  s.stores = {{3, acc}};
  s.config.streaming_stores = true;
  ASSERT_GT(KernelScratchBytes(s), 0);
  const SymExpr rows = S(0) * S(1) * 300;
  ExpectCheckedMatchesUnchecked(WithExtents(s, {rows, 300, 300, rows}),
                                RandomSymbols(3, {{1, 3}, {1, 5}, {0, 0}}, 5), {{2, 1}});
}

// The matmul's buffers: A, B, out, bias, residual (and B prepacked).
std::vector<SymExpr> MatMulExtents(const MatMulOptions& o) {
  const SymExpr batch = S(0), n = S(2), k = S(3);
  const SymExpr m = o.static_m.has_value() ? SymExpr(*o.static_m) : S(1);
  SymExpr b = o.b_layout == BLayout::kStrided ? 2 * n * k : n * k;
  if (!o.broadcast_b) b = b * batch;
  std::vector<SymExpr> e = {batch * m * k, b, batch * m * n, n, batch * m * n};
  if (o.prepacked_block > 0) {
    // ir::PackedB::elements() at the shapes below, whose N is a multiple of the block.
    e.push_back(n * k);
  }
  return e;
}

void ExpectMatMulMatches(const MatMulOptions& o, const std::string& name,
                         const std::vector<std::vector<int64_t>>& shapes,
                         const std::vector<std::pair<int64_t, int64_t>>& tiles) {
  SCOPED_TRACE(name);
  ExpectCheckedMatchesUnchecked(WithExtents(MatMulKernel(o, name), MatMulExtents(o)), shapes,
                                tiles);
}

ir::TileConfig Config(int mr, int nrv, int unroll) {
  ir::TileConfig c;
  c.mr = mr;
  c.nr_vectors = nrv;
  c.vector_width = 8;
  c.unroll = unroll;
  return c;
}

// B shared by the batch and prepacked in blocks of 16 columns (2 vectors of 8), read from the
// packed copy when the tile's columns start on a block.
MatMulOptions Prepacked(int unroll) {
  MatMulOptions o;
  o.broadcast_b = true;
  o.prepacked_block = 16;
  o.config = Config(4, 2, unroll);
  o.config->pack_b = true;
  o.config->panel_bytes = 8192;
  return o;
}

// Every form of the matmul: broadcast (B along N), B transposed (dot products), B strided
// (per-lane loads), B prepacked; packing panels into the scratch, K blocks, rows outside,
// heavy and light epilogues, A transposed, a static M with its tail block; K = 0 included.
TEST(CheckedKernelTest, MatMulFormsMatchUnchecked) {
  // symbols: batch, M, N, K
  const auto shapes = RandomSymbols(4, {{1, 2}, {1, 13}, {1, 40}, {0, 37}}, 6);
  MatMulOptions o;
  o.config = Config(4, 2, 2);
  o.epilogue = o.light_epilogue = true;
  ExpectMatMulMatches(o, "ck_mm_broadcast", shapes, {{1, 0}, {5, 16}});

  o.config->pack_b = true;
  o.config->panel_bytes = 4096;
  o.config->kc = 8;
  o.light_epilogue = false;  // gelu: the epilogue function
  ExpectMatMulMatches(o, "ck_mm_packed_kc", shapes, {{1, 0}, {9, 16}});

  o.b_layout = BLayout::kNK;
  ExpectMatMulMatches(o, "ck_mm_transposed_b", shapes, {{1, 0}, {9, 16}});
  o.config->pack_b = false;
  o.config->kc = 0;
  ExpectMatMulMatches(o, "ck_mm_dot", shapes, {{1, 3}, {6, 5}});

  o.b_layout = BLayout::kStrided;
  o.config = Config(2, 2, 1);
  ExpectMatMulMatches(o, "ck_mm_strided_b", shapes, {{3, 8}});

  MatMulOptions t;
  t.transpose_a = true;
  t.config = Config(3, 2, 1);
  t.config->loop_order = ir::LoopOrder::kRowBlocksOuter;
  t.config->mc = 6;
  t.static_m = 11;
  auto static_m = shapes;
  for (auto& s : static_m) s[1] = 11;
  ExpectMatMulMatches(t, "ck_mm_transposed_a_rows_outer", static_m, {{7, 24}});

  // A static N leaving 3 whole vectors (of 8) and 5 columns past its last block of 4 vectors:
  // one micro-tile of those 3 and the 5 columns as its masked last vector, tiles on and off
  // the blocks (off them, the tiles of the other columns).
  MatMulOptions r;
  r.config = Config(6, 4, 2);
  r.epilogue = r.light_epilogue = true;
  r.static_n = 61;
  auto rest_shapes = shapes;
  for (auto& s : rest_shapes) s[2] = 61;
  ExpectMatMulMatches(r, "ck_mm_rest_vectors", rest_shapes, {{1, 0}, {5, 32}, {4, 19}});

  // B prepacked; N a multiple of the block (the plan's copy holds the full blocks only), tiles
  // on and off the blocks.
  MatMulOptions p = Prepacked(2);
  p.config->prefetch_b = 256;
  p.epilogue = p.light_epilogue = true;
  auto packed_shapes = RandomSymbols(4, {{1, 2}, {1, 13}, {1, 3}, {0, 37}}, 7);
  for (auto& s : packed_shapes) s[2] *= 16;
  ExpectMatMulMatches(p, "ck_mm_prepacked", packed_shapes, {{1, 0}, {1, 16}, {8, 32}, {3, 17}});
}

// --- Accesses past their buffers die, naming the kernel, the buffer, the index, the extent.

// out[i] = x[i + offset] * 2 over [s0], vectors of 8.
ir::Kernel ScaleKernel(const std::string& name, int64_t offset) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = name;
  k.num_buffers = 2;
  k.domain = {S(0)};
  k.config.vector_width = 8;
  k.accesses = {MakeAccess(0, {1}, offset), MakeAccess(1, {1})};
  Program p;
  const int v = p.Bin(ExprOp::kMul, p.Load(0), p.Const(2.f));
  k.output = p.nodes();
  k.stores = {{1, v}};
  k.buffer_extents = {{S(0), "input 0"}, {S(0), "output 0"}};
  return k;
}

// Runs `kernel` checked over its grid at `symbols`, on buffers of its extents.
void RunChecked(const ir::Kernel& kernel, const std::vector<int64_t>& symbols) {
  absl::StatusOr<CompiledObject> c = CompileKernel(CheckedEngineFor(HostIsa()), kernel, kChecked);
  if (!c.ok()) {
    std::fprintf(stderr, "compile failed: %s\n", c.status().ToString().c_str());
    return;
  }
  Buffers b = MakeBuffers(kernel, symbols, 1);
  const std::array<SymExpr, 2> grid = ir::KernelGrid(kernel);
  RunGrid(c->entry, b.pointers, symbols, grid[0].Evaluate(symbols), grid[1].Evaluate(symbols), 0, 0,
          KernelScratchBytes(kernel));
}

TEST(CheckedKernelDeathTest, ElementwiseLoadPastTheEnd) {
  // x has 36 elements, the kernel reads 37: the masked last vector (elements 32 to 36) is caught.
  ir::Kernel k = ScaleKernel("ck_past_end", 0);
  k.buffer_extents[0].elements = S(0) - 1;
  EXPECT_DEATH(RunChecked(k, {37}),
               "pto: bounds fault in checked kernel ck_past_end: load from buffer 0 \\(input 0\\) "
               "at element 36, outside its 36 elements \\(the access spans elements 32 to 36\\)");
}

TEST(CheckedKernelDeathTest, ElementwiseLoadBeforeTheStart) {
  EXPECT_DEATH(RunChecked(ScaleKernel("ck_before_start", -1), {37}),
               "pto: bounds fault in checked kernel ck_before_start: load from buffer 0 "
               "\\(input 0\\) at element -1, outside its 37 elements \\(the access spans elements "
               "-1 to 6\\)");
}

TEST(CheckedKernelDeathTest, ElementwiseStorePastTheEnd) {
  ir::Kernel k = ScaleKernel("ck_store_past_end", 0);
  k.buffer_extents[1].elements = S(0) - 8;
  EXPECT_DEATH(RunChecked(k, {40}),
               "pto: bounds fault in checked kernel ck_store_past_end: store to buffer 1 "
               "\\(output 0\\) at element 32, outside its 32 elements \\(the access spans elements "
               "32 to 39\\)");
}

TEST(CheckedKernelDeathTest, RowOpReadsOneRowPastItsInput) {
  // 3 rows of 20, the input holds 2: the third row's first vector is caught.
  ir::Kernel k = RowKernel(ir::RowOpKind::kSoftmax, 1, "ck_row_past_end");
  k.config.vector_width = 8;
  const SymExpr all = S(0) * S(1) * S(2);
  k = WithExtents(k, {all - S(2), S(2), S(2), all});
  EXPECT_DEATH(RunChecked(k, {1, 3, 20}),
               "pto: bounds fault in checked kernel ck_row_past_end: load from buffer 0 \\(b0\\) "
               "at element 40, outside its 40 elements \\(the access spans elements 40 to 47\\)");
}

TEST(CheckedKernelDeathTest, MatMulReadsOneRowPastA) {
  // A holds 7 of M = 8 rows (K = 5): the second block of 4 rows reads row 7 at element 35.
  MatMulOptions o;
  o.config = Config(4, 2, 1);
  std::vector<SymExpr> extents = MatMulExtents(o);
  extents[0] = extents[0] - S(3);
  ir::Kernel k = WithExtents(MatMulKernel(o, "ck_mm_past_a"), extents);
  EXPECT_DEATH(RunChecked(k, {1, 8, 16, 5}),
               "pto: bounds fault in checked kernel ck_mm_past_a: load from buffer 0 \\(b0\\) at "
               "element 35, outside its 35 elements");
}

TEST(CheckedKernelDeathTest, MatMulReadsPastItsPrepackedB) {
  // The packed copy is one K row short of N x K.
  const MatMulOptions o = Prepacked(1);
  std::vector<SymExpr> extents = MatMulExtents(o);
  extents[5] = extents[5] - 16;
  ir::Kernel k = WithExtents(MatMulKernel(o, "ck_mm_past_packed"), extents);
  EXPECT_DEATH(
      RunChecked(k, {1, 8, 16, 5}),
      "pto: bounds fault in checked kernel ck_mm_past_packed: load from buffer 5 \\(b5\\)");
}

TEST(CheckedKernelTest, CheckedKernelNeedsAnExtentPerSlot) {
  ir::Kernel k = ScaleKernel("ck_no_extents", 0);
  k.buffer_extents.pop_back();
  llvm::LLVMContext context;
  absl::StatusOr<std::unique_ptr<llvm::Module>> m = EmitKernel(k, HostTarget(), kChecked, context);
  ASSERT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << m.status();
  EXPECT_EQ(m.status().message(),
            "kernel 'ck_no_extents': a checked kernel needs the extent of each of its 2 buffer "
            "slots; it has 1");
  // Unchecked code does not need them.
  EXPECT_TRUE(EmitKernel(k, HostTarget(), context).ok());
}

// Checked code references the fault handler; an engine without it refuses the object.
TEST(CheckedKernelTest, UncheckedEngineRefusesCheckedObject) {
  absl::StatusOr<CompiledObject> c =
      CompileKernel(EngineFor(HostIsa()), ScaleKernel("ck_wrong_engine", 0), kChecked);
  ASSERT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition) << c.status();
  EXPECT_NE(c.status().message().find(
                "it references undefined symbol 'pto_kernel_bounds_fault', which is not on the "
                "allow-list (memset, memcpy, memmove)"),
            std::string::npos)
      << c.status();
}

}  // namespace
}  // namespace pto::jit::testing
