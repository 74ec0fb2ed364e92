// What codegen needs to know about the machine it generates code for. Built from a
// device::DeviceInfo (tests pass a restricted one to force a narrower ISA).
#ifndef PTO_JIT_CODEGEN_CODEGEN_TARGET_H_
#define PTO_JIT_CODEGEN_CODEGEN_TARGET_H_

#include <string>

#include "device/device_info.h"

namespace pto::jit {

// Revision of the code the emitters generate for a given kernel description: part of the
// compiler fingerprint (so of every kernel's cache key), so a cache written by an earlier
// codegen is a miss, not old code. Bump it with every change to generated code.
// 2: vector math without subnormals (flush below FLT_MIN), AVX-512 reciprocal estimates.
// 3: per-batch packing of a transposed B, one epilogue call per micro-tile, M = 1 over a
//    prepacked B read block by block.
// 4: short static rows of row ops in registers.
// 5: one matmul epilogue function per vector width, taking the tile's rows and vectors.
// 6: masked vectors for the last columns of matmul rows (were scalar code).
// 7: masked vectors for the last elements of elementwise, reduce and row-op spans, and for
//    the last vector of a register row.
// 8: exp's 2^n by vscalefps on AVX-512; softmax's row max by plain maxps.
// 9: short matmul epilogues (a scale, a bias, a residual) inline at each accumulator.
// 10: the matmul's M tail in one block of M mod mr rows (2 for a symbolic M).
// 11: lean micro-tiles for a prepacked B's off-block ranges and one-row remainder.
// 12: register rows of up to 8 vectors 2 to 4 at a time.
// 13: exp's polynomial by Horner (degree 6); gelu (erf) as max(x, 0) - |x|/2 erfc(|x|/sqrt2).
// 14: TileConfig::prefetch_b (a prepacked B prefetched ahead of the micro-tiles' loads).
// 15: tiles of several row blocks prefetch the next K block's panel, spread over the blocks.
// 16: softmax rows of 5 to 8 vectors take the next row's max beside this row's exps.
// 17: tiles of 2 to 4 row blocks prefetch ahead of their loads as well as the next K block.
// 18: K blocks of 64 to 256 floats prefetch the next row block's A rows.
// 19: TileConfig::prefetch_inputs (elementwise inputs prefetched into the L2 ahead of loads);
//     softmax keeping exp prefetches the next row in its exp pass (was: the final pass).
// 20: kernel symbols name the tile shape.
// 21: a B stored [N, K] is packed one group of `lanes` columns at a time along the K block.
// 22: a matmul reading A across K copies it into its scratch a K block at a time (MatMulASlab).
// 23: the whole vectors a static N leaves past its last block of columns in one micro-tile.
// 24: ... with a partial vector after them, that vector joins the micro-tile, masked alone.
// 25: a static N's last few columns over a long static K as dot products (DotTail).
// 26: TileConfig::prefetch_output (matmul micro-tiles prefetch their output lines for writing).
// 27: a matmul reading A across K in place prefetches the next line along M at each K step;
//     TileConfig::pack_prefetch_rows (B [K, N]'s pack prefetches rows ahead of its copy).
// 28: prefetch_output also prefetches the epilogue's operands stored as the output is.
// 29: TileConfig::narrow_tail (a micro-tile's masked last vector at half width).
// 30: a static N's tail mask is read once per micro-tile on AVX-512.
// 31: ... and a symbolic N's remainder mask too (EmitContext::HeldLaneMask).
// 32: an access's index keeps its constant part apart, as the address's displacement
//     (AccessEmitter::Index, Pointer).
inline constexpr int kCodegenRevision = 32;

// How code is generated beyond the target: part of a kernel's identity (its name, memo and
// cache key) wherever it is not the default.
struct CodegenOptions {
  // Checked kernels: every load and store of a buffer (and of the scratch) is tested against
  // its extent (ir::Kernel::buffer_extents) and an access outside it calls the bounds-fault
  // handler (jit/codegen/bounds_fault.h), which names the kernel, the buffer, the index and
  // the extent on stderr and aborts. Prefetches are not checked (they never fault).
  bool bounds_checks = false;
};

struct CodegenTarget {
  std::string triple = "x86_64-pc-linux-gnu";
  std::string cpu_name = "x86-64";  // LLVM CPU name ("znver3", "x86-64-v3")
  std::string features;             // LLVM feature string; decides the ISA on its own
  device::Isa isa = device::Isa::kSse2;
  int vector_bits = 128;  // natural vector width in bits
  bool has_fma = false;

  int f32_lanes() const { return vector_bits / 32; }

  static CodegenTarget FromDevice(const device::DeviceInfo& info) {
    CodegenTarget t;
    t.cpu_name = info.cpu_name;
    t.features = info.LlvmFeatures();
    t.isa = info.isa;
    t.vector_bits = info.vector_bits;
    t.has_fma = info.has_fma;
    return t;
  }
};

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_CODEGEN_TARGET_H_
