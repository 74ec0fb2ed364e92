#include "jit/passes/prepack_constant_weights.h"

#include <algorithm>

#include "jit/plan.h"

namespace pto::jit {

bool ReadsConstantInput(const ir::TileGraph& tiles, const ir::KernelCall& call, int access,
                        const std::vector<bool>& constant_inputs) {
  if (access < 0) return false;
  const ir::Buffer& input = tiles.buffers[call.buffers[call.kernel.accesses[access].buffer]];
  return input.kind == ir::BufferKind::kInput && input.index >= 0 &&
         input.index < static_cast<int>(constant_inputs.size()) && constant_inputs[input.index];
}

void PrepackConstantWeights(ir::TileGraph& tiles, const std::vector<bool>& constant_inputs,
                            int lanes) {
  int packed_buffers = 0;
  for (ir::KernelCall& call : tiles.calls) {
    if (packed_buffers == kMaxKernelBuffers) break;  // Plan::Run's bound
    ir::Kernel& k = call.kernel;
    if (k.kind != ir::KernelKind::kMatMul || !k.config.pack_b || k.config.panel_bytes <= 0 ||
        k.b_packed >= 0 || k.b < 0) {
      continue;
    }
    const ir::Access& b = k.accesses[k.b];
    if (!ReadsConstantInput(tiles, call, k.b, constant_inputs) || b.dtype != ir::DType::kF32) {
      continue;
    }
    const ir::Buffer& input = tiles.buffers[call.buffers[b.buffer]];
    const int rank = static_cast<int>(k.domain.size());
    // Strides: one per domain dim, then K. B must not move with the batch dims or M.
    bool plain = static_cast<int>(b.strides.size()) == rank + 1 && b.offset.IsConstant() &&
                 k.k.IsConstant() && k.domain[rank - 1].IsConstant();
    for (int d = 0; plain && d + 1 < rank; ++d) {
      plain = b.strides[d].IsConstant() && b.strides[d].constant() == 0;
    }
    plain = plain && b.strides[rank - 1].IsConstant() && b.strides[rank].IsConstant();
    if (!plain) continue;
    ir::PackedB pack;
    pack.k = k.k.constant();
    pack.n = k.domain[rank - 1].constant();
    pack.offset = b.offset.constant();
    pack.stride_n = b.strides[rank - 1].constant();
    pack.stride_k = b.strides[rank].constant();
    pack.block = ir::MatMulColumnBlock(k.config, lanes);
    if (pack.k <= 0 || pack.n < pack.block) continue;  // no full column block to pack
    ir::Buffer packed;
    packed.kind = ir::BufferKind::kPacked;
    packed.index = input.index;
    packed.pack = pack;
    packed.elements = ir::SymExpr(pack.elements());
    packed.label = input.label + " (packed for " + k.name + ")";
    tiles.buffers.push_back(packed);
    k.b_packed = k.num_buffers++;
    k.b_packed_block = pack.block;
    call.buffers.push_back(static_cast<int>(tiles.buffers.size()) - 1);
    ++packed_buffers;
  }
}

}  // namespace pto::jit
