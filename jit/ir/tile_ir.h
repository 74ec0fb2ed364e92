// Level 2: the tile graph. Each Kernel is one fusion group: a loop nest over an iteration
// domain, reading and writing buffers through affine Accesses, with a TileConfig. Codegen
// (jit/codegen) turns one Kernel into one LLVM function with the kernel ABI (jit/kernel_abi.h).
#ifndef PTO_JIT_IR_TILE_IR_H_
#define PTO_JIT_IR_TILE_IR_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "jit/ir/dtype.h"
#include "jit/ir/sym_expr.h"

namespace pto::ir {

// An affine view of a kernel buffer slot over the kernel's (extended) domain:
//   element index = offset + sum_d idx[d] * strides[d]      (in elements, not bytes)
// A broadcast dim has stride 0. Symbols in offset/strides are read from args->symbols.
struct Access {
  int buffer = 0;  // kernel-local slot: args->buffers[buffer]
  SymExpr offset;
  std::vector<SymExpr> strides;
  DType dtype = DType::kF32;
  // An access read by kGather: the element index above moves `gather_stride` elements per unit
  // of the gathered index, which must lie in [0, gather_extent) (elsewhere nothing is read).
  bool gather = false;
  SymExpr gather_stride, gather_extent;
};

// Scalar expression program, evaluated per domain point (codegen evaluates it on vectors).
// Each node has a dtype, f32 or i32: arithmetic (add, sub, mul, max, min, neg, abs) is
// integer (wrapping two's complement) on i32 operands; comparisons give f32 1/0 from two f32
// or two i32 operands.
enum class ExprOp : uint8_t {
  kLoad,   // accesses[access]
  kConst,  // value
  kAcc,    // the kernel's own result at this point (reduction, row op, or matmul accumulator)
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,
  kNeg,
  kAbs,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kTanh,
  kSigmoid,
  kRelu,
  kGeluTanh,
  kGeluErf,
  kSilu,
  kErf,
  kGeluErfGrad,
  kEq,  // comparisons (binary): f32 1 or 0; NaN compares false, except ne
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kSelect,  // b where a is nonzero, else c (a f32 or i32; b and c of the node's dtype)
  kCast,    // a converted to the node's dtype: f32 -> i32 truncates (saturating, NaN -> 0)
  kIota,    // the index of the domain point along domain dim `axis` (i32)
  // accesses[access] (a gather access, f32) at the point, moved by the i32 index a: NaN where
  // a lies outside [0, gather_extent), negative included (no wrap-around; JAX's "fill" mode).
  kGather,
};
const char* ExprOpName(ExprOp op);
bool IsBinary(ExprOp op);  // two operands, a and b (arithmetic and comparisons)
bool IsComparison(ExprOp op);
// exp, log, tanh, sigmoid, gelu and silu: polynomial approximations of tens of instructions.
bool IsTranscendental(ExprOp op);

struct ExprNode {
  ExprOp op = ExprOp::kConst;
  int a = -1, b = -1;  // operand node indices (earlier in the same program)
  int access = -1;     // kLoad, kGather
  float value = 0;     // kConst of dtype f32
  int c = -1;          // kSelect: the third operand
  DType dtype = DType::kF32;
  int axis = -1;       // kIota
  int32_t ivalue = 0;  // kConst of dtype i32
};

struct Store {
  int access = 0;  // index into Kernel::accesses
  int value = 0;   // node index in Kernel::output
};

enum class KernelKind : uint8_t {
  kElementwise = 0,
  kReduce = 1,
  kRowOp = 2,
  kMatMul = 3,
  kScatterAdd = 4,
};
enum class ReduceKind : uint8_t { kSum = 0, kMax = 1, kMean = 2, kLogSumExp = 3 };
// The backward kinds (kSoftmaxGrad...) compute the input gradient dx of their forward kind.
enum class RowOpKind : uint8_t {
  kSoftmax = 0,
  kLogSoftmax = 1,
  kLayerNorm = 2,
  kRmsNorm = 3,
  kSoftmaxGrad = 4,
  kLogSoftmaxGrad = 5,
  kLayerNormGrad = 6,
  kRmsNormGrad = 7,
};
// Whether `kind` is a backward row op (it reads a second row, `Kernel::input_dy`).
bool IsRowGrad(RowOpKind kind);

// Matmul: which loop encloses which (see TileConfig::kc and mc).
enum class LoopOrder : uint8_t {
  kPanelsOuter = 0,     // column panels outside, all of the tile's rows inside: B reused
  kRowBlocksOuter = 1,  // blocks of mc rows outside, the panels inside: A's rows reused
};
const char* LoopOrderName(LoopOrder order);

// Every parameter codegen or the plan may vary; the tuner searches these.
struct TileConfig {
  int64_t tile_rows = 1;  // grain of the plan's split along grid dim 0
  int64_t tile_cols = 0;  // grain along grid dim 1 (0: the whole extent)
  int vector_width = 0;   // f32 lanes; 0 = the target's natural width
  // Vectors per inner-loop iteration (elementwise, reduce, row ops); matmul: K steps per
  // iteration of the micro-kernel's K loop.
  int unroll = 1;
  int mr = 4;          // matmul micro-tile rows
  int nr_vectors = 2;  // matmul micro-tile columns, in vectors
  // Matmul: the kernel sweeps its column range in panels whose slice of B (K x panel columns
  // of f32) fits this many bytes, all rows per panel, so B stays in cache while A streams.
  // 0: one panel (the whole range).
  int64_t panel_bytes = 0;
  // Matmul, broadcast form: copy each panel's B slice into the per-thread scratch (contiguous
  // nr-vector blocks, K rows each) before the row sweep, when it fits panel_bytes and the tile
  // has enough rows to repay the copy. The plan then passes panel_bytes of scratch.
  bool pack_b = false;
  // Matmul packing a B stored [K, N] (pack_b): the copy of each K row of a column block first
  // prefetches the same columns this many rows further down into the L1, so the copy's walk
  // down B (a row stride apart) waits on fewer misses. 0: none.
  int64_t pack_prefetch_rows = 0;
  static constexpr int64_t kMaxPackPrefetchRows = 1024;
  // Matmul: the K loop runs in blocks of kc, the partial sums kept in the output between
  // blocks and the epilogue applied after the last one, so a panel is kc (not K) rows of B and
  // stays in cache however long K is. 0: K in one block. Used by kernels with one store.
  int64_t kc = 0;
  // Matmul with kRowBlocksOuter: rows per outer block (0: all of the tile's rows).
  int64_t mc = 0;
  // Matmul over a prepacked B (ir::PackedB), 0: no prefetch. Tiles of one row block
  // (tile_rows <= mr) prefetch the packed stream this many bytes ahead of their loads, a line
  // per 64 bytes loaded; tiles of several row blocks instead prefetch the next K block's panel
  // into the L2, each row block a share (the value only enables it). A constant weight
  // streams from memory once per call; the hardware prefetchers stop at each 4 KiB page, so a
  // kernel with few rows per load (M = 8, 32) waits on every page without it.
  int64_t prefetch_b = 0;
  static constexpr int64_t kMaxPrefetchBytes = 1 << 20;
  // Matmul: each micro-tile prefetches its output lines for writing before its K loop, and
  // the lines of the epilogue's operands stored as the output is (a residual, a saved
  // derivative) for reading, so their misses (the write-allocate read of an output that is
  // not cached, the operand's read) overlap the loop instead of stalling the epilogue after
  // it. Pays where the loop is short and the output is larger than the L1.
  bool prefetch_output = false;
  // Matmul over a static N whose columns past the last whole vector are at most half a
  // vector: the micro-tile's masked last vector is half as wide (ymm lanes of an AVX-512
  // target). Pays on cores that run a 512-bit operation as two 256-bit halves, where the
  // narrow vector's FMAs cost half.
  bool narrow_tail = false;
  LoopOrder loop_order = LoopOrder::kPanelsOuter;
  // Elementwise and row ops with one store: its vector stores bypass the caches (non-temporal,
  // after a scalar peel to the vector's alignment, with an sfence at the end), for outputs
  // larger than the caches that nothing reads soon: no write-allocate read of each line.
  bool streaming_stores = false;
  // Elementwise: each vector of an input streamed along the row (AccessEmitter::StreamedLoads)
  // prefetches its line this many bytes ahead into the L2 (prefetcht1, one per 64 bytes), so
  // memory keeps streaming while a long body (a transcendental) computes. 0: none. Row ops
  // prefetch the next row whatever this says.
  int64_t prefetch_inputs = 0;

  friend bool operator==(const TileConfig&, const TileConfig&) = default;
};

// Columns of a matmul micro-tile's full block: nr_vectors vectors of the config's width (or
// the target's `lanes` when vector_width is 0). A prepacked B is packed in blocks of this.
inline int MatMulColumnBlock(const TileConfig& config, int lanes) {
  return std::max(1, config.nr_vectors) * (config.vector_width > 0 ? config.vector_width : lanes);
}

// Vector registers an mr x nr_vectors matmul micro-tile holds at once: mr * nr_vectors
// accumulators, nr_vectors vectors of B and one broadcast element of A. A micro-tile needing more
// than the target's DeviceInfo::vector_registers spills (codegen still emits it correctly).
constexpr int64_t MatMulMicroTileRegisters(int64_t mr, int64_t nr_vectors) {
  return mr * nr_vectors + nr_vectors + 1;
}

// A kernel buffer slot's size in elements (in the kernel's symbols) and a name for messages
// ("input 0", "output 1", "intermediate", "packed input 2").
struct BufferExtent {
  SymExpr elements;
  std::string name;
};

// Kind-specific meaning of the fields (rank = domain.size()):
//
// kElementwise: domain = output shape. `output` is the whole body (no kAcc); every store is
//   evaluated at every domain point. Grid: {rows = prod(domain[0..rank-2]), cols = domain[rank-1]}
//   (rank 0 behaves as domain [1]).
// kReduce: domain = the reduced input's shape; `axis` is reduced with `reduce`. `input` computes
//   the value being reduced at each domain point (node `input_value`). `output` is evaluated at
//   each point of the domain with the axis index fixed at 0 (its accesses have stride 0 along the
//   axis); kAcc there is the reduction result (divided by the extent for kMean; for kLogSumExp
//   m + log(sum(exp(x - m))), m the max, two passes over the axis).
//   Grid: {outer = prod(domain[0..axis-1]), inner = prod(domain[axis+1..])}.
// kRowOp: domain = input shape; the row is the last axis. `input` computes x at each point.
//   kAcc in `output` is softmax(x) / log_softmax(x) / (x-mean)*rstd / x*rms_inverse for the
//   row, and weight/bias are applied by `output`'s own loads. Grid: {rows, 1}.
//   Mean/variance use two passes over the row (sound for rows with a large mean).
//   The backward kinds read two rows: `input_value` (y for softmax_grad / log_softmax_grad, x
//   for the norms) and `input_dy` (dy; dy * weight for the norms), and kAcc is dx. They make
//   one pass for every row sum they need and one for the output.
// kMatMul: domain = output shape [batch..., M, N]; `k` is the contraction extent. Accesses `a`
//   and `b` have rank+1 strides: one per domain dim and a last one for K (a's N stride and b's M
//   stride are 0). b's N stride is 1, or b's K stride is 1 (dot-product form); other strides
//   are correct but slow (per-lane loads). `output` is the epilogue (kAcc = the dot product).
//   Grid: {rows = prod(batch)*M, cols = N}.
// kScatterAdd: domain = [P, N, M, Q]: the result viewed as [P, N, Q] around the scatter axis
//   and M index positions. Access `a` reads the updates ([P, M, Q]: its N stride is 0), access
//   `b` the i32 indices (only its M stride is nonzero); `output` is [kAcc], stored through an
//   access whose M stride is 0. A tile owns rows of the result viewed as [P * N, Q] and a
//   range of its columns: it zeroes them, then adds update (p, m, q) into (p, indices[m], q)
//   for m in order where that row is its own, dropping indices outside [0, N): each element's
//   sum runs in index order however the grid is split. Grid: {rows = P * N, cols = Q}.
struct Kernel {
  KernelKind kind = KernelKind::kElementwise;
  std::string name;  // the LLVM symbol; unique per cache key
  int num_buffers = 0;
  Shape domain;
  std::vector<Access> accesses;
  std::vector<ExprNode> input;  // kReduce, kRowOp
  int input_value = -1;
  int input_dy = -1;  // kRowOp backward kinds: the node of `input` computing the second row
  std::vector<ExprNode> output;
  std::vector<Store> stores;
  // kReduce
  int axis = 0;
  ReduceKind reduce = ReduceKind::kSum;
  // kRowOp
  RowOpKind row_op = RowOpKind::kSoftmax;
  float eps = 1e-5f;
  // kMatMul
  SymExpr k;
  int a = -1, b = -1;  // indices into accesses (kScatterAdd: the updates and the indices)
  // Kernel buffer slot holding B prepacked (ir::PackedB layout), read instead of packing B's
  // panels; -1: none. Its column block, which must be config.nr_vectors vectors.
  int b_packed = -1;
  int b_packed_block = 0;
  TileConfig config;
  // Per buffer slot (empty: not known): its size and what it holds, filled by the pipeline
  // (jit/passes/attach_buffer_extents.h). Only checked kernels' code depends on it (they test
  // every load and store against it), so KernelToString leaves it out and the kernel compiler
  // adds it to a checked kernel's identity.
  std::vector<BufferExtent> buffer_extents;
};

// An elementwise kernel that only copies, transposing its last two dims: one load and one
// store of one dtype, one of them contiguous along the last dim and the other along the dim
// before it, not both along the same (rank >= 2). kStoresAcross: the load runs along the last
// dim (the rows) and the store across; kLoadsAcross: the other way round.
enum class TransposingCopy : uint8_t { kNone = 0, kStoresAcross = 1, kLoadsAcross = 2 };
TransposingCopy TransposingCopyOf(const Kernel& kernel);

// A matmul kernel's B read in the dot-product form: stored [N, K], its N stride not the
// constant 1 and its K stride the constant 1 (false when the kernel has no such b access).
bool MatMulDotForm(const Kernel& kernel);
// Whether a matmul kernel can run K in blocks: the partial sums go through its output, so it
// must have one store, of f32.
bool MatMulCanBlockK(const Kernel& kernel);

// The 2-D grid the plan splits into tile ranges [lo, hi), per the table above.
std::array<SymExpr, 2> KernelGrid(const Kernel& kernel);

// Multi-line listing used by `pto dump --stage=tile`.
std::string KernelToString(const Kernel& kernel, std::span<const std::string> symbol_names);

}  // namespace pto::ir

#endif  // PTO_JIT_IR_TILE_IR_H_
