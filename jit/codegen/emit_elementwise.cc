// Elementwise kernels: grid {rows = prod(domain[0..rank-2]), cols = domain[rank-1]}; the body is
// vectorized along the last dim (config.unroll vectors per iteration, then single vectors, then
// one masked vector for the last elements). With config.prefetch_inputs, each vector body first
// prefetches its streamed inputs that many bytes ahead. A copy that transposes its last two
// dims moves blocks through registers instead (emit_transposing_copy.h).
#include <vector>

#include "jit/codegen/emit_expr.h"
#include "jit/codegen/emit_kinds.h"
#include "jit/codegen/emit_loops.h"
#include "jit/codegen/emit_transposing_copy.h"

namespace pto::jit {

absl::Status EmitElementwise(EmitContext& ec, AccessEmitter& access) {
  const ir::Kernel& k = ec.kernel;
  const int rank = std::max<int>(1, static_cast<int>(k.domain.size()));
  const int vec_dim = rank - 1;
  std::vector<llvm::Value*> row_dims;
  for (int d = 0; d + 1 < static_cast<int>(k.domain.size()); ++d) {
    row_dims.push_back(ec.Sym(k.domain[d]));
  }
  std::vector<int> roots;
  for (const ir::Store& s : k.stores) roots.push_back(s.value);

  // Streaming stores: one store, unit stride along the vectorized dim (a rank-0 kernel's
  // accesses have none: it neither streams nor prefetches, whatever its config).
  const bool streaming = k.config.streaming_stores && k.stores.size() == 1 &&
                         ConstantValue(access.Stride(k.stores[0].access, vec_dim)) == 1;
  const std::vector<int> prefetched =
      k.config.prefetch_inputs > 0 ? access.StreamedLoads(k.output, vec_dim) : std::vector<int>{};
  // Columns [lo, hi) of grid row `row`.
  const auto element_row = [&](llvm::Value* row, llvm::Value* lo, llvm::Value* hi) {
    std::vector<llvm::Value*> idx = ec.Unflatten(row, row_dims);
    idx.resize(rank, nullptr);
    const SpanBody body = [&](llvm::Value* col, int width, int /*slot*/) {
      idx[vec_dim] = col;
      if (width > 1) {
        for (int a : prefetched) access.PrefetchAhead(a, idx, width, k.config.prefetch_inputs);
      }
      auto load = [&](int a) { return access.Load(a, idx, vec_dim, width); };
      auto index = [&](int dim) { return DomainIndex(ec.b, idx, vec_dim, width, dim); };
      auto gather = [&](int a, llvm::Value* i) { return access.Gather(a, idx, vec_dim, width, i); };
      std::vector<llvm::Value*> v =
          EmitProgram(ec.b, k.output, roots, ec.VecType(width), load, nullptr, index, gather);
      for (const ir::Store& s : k.stores) {
        access.Store(s.access, idx, vec_dim, width, v[s.value]);
      }
    };
    if (streaming) {
      idx[vec_dim] = lo;
      llvm::Value* start = access.Address(k.stores[0].access, idx);
      access.StreamStores(k.stores[0].access);
      EmitAlignedVectorSpan(ec, lo, hi, k.config.unroll, start, body, /*fused=*/true, &access);
      access.StreamStores(-1);
    } else {
      EmitVectorSpan(ec, lo, hi, k.config.unroll, body, /*fused=*/true, &access);
    }
  };
  const ir::TransposingCopy transposing = ir::TransposingCopyOf(k);
  if (!streaming && transposing != ir::TransposingCopy::kNone && ec.lanes > 1 &&
      (ec.lanes & (ec.lanes - 1)) == 0) {
    EmitTransposingCopy(ec, access, transposing, element_row);
  } else {
    EmitForLoop(ec, ec.lo[0], ec.hi[0],
                [&](llvm::Value* row) { element_row(row, ec.lo[1], ec.hi[1]); });
  }
  if (streaming) EmitStoreFence(ec);
  return absl::OkStatus();
}

}  // namespace pto::jit
