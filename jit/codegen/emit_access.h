// Address computation and memory operations for ir::Access (internal to jit/codegen).
//   element index = offset + sum_d idx[d] * strides[d]
// Offsets and strides are evaluated once at entry (constants fold; symbols come from
// args->symbols). Loads of `width` points along one dim use a vector load when that stride is
// the constant 1, a splat when it is 0, and per-lane loads (gather) otherwise.
#ifndef PTO_JIT_CODEGEN_EMIT_ACCESS_H_
#define PTO_JIT_CODEGEN_EMIT_ACCESS_H_

#include <span>
#include <vector>

#include "jit/codegen/emit_context.h"

namespace pto::jit {

class AccessEmitter {
 public:
  // Evaluates every access's offset and strides at the current insertion point (the entry).
  explicit AccessEmitter(EmitContext& ec);

  // i64 element index of `access` at `idx` (idx[d] may be null: index 0).
  llvm::Value* Index(int access, std::span<llvm::Value* const> idx);
  // `width` points starting at idx, advancing idx[vec_dim] (vec_dim < 0: a scalar point).
  llvm::Value* Load(int access, std::span<llvm::Value* const> idx, int vec_dim, int width);
  void Store(int access, std::span<llvm::Value* const> idx, int vec_dim, int width,
             llvm::Value* value);
  // A gather access's `width` points (as Load) each moved by its lane of `index` (i32, of the
  // width) times the access's gather_stride: a masked gather of the lanes whose index lies in
  // [0, gather_extent) (and in the lane mask in force), NaN in the others; when all lanes share
  // one index along a unit stride (an embedding row), one masked vector load. Checked kernels test
  // the access at index 0 and at gather_extent - 1: the lanes read lie between the two.
  llvm::Value* Gather(int access, std::span<llvm::Value* const> idx, int vec_dim, int width,
                      llvm::Value* index);
  // Until the next call, vector stores of `access` along a unit stride are non-temporal and
  // assume an address aligned to the kernel's vector (the caller peels to it:
  // EmitAlignedVectorSpan). -1: none.
  void StreamStores(int access) { streaming_access_ = access; }
  // Until the next call, vector loads and stores along their vec_dim touch only the lanes set
  // in `mask` (EmitContext::LaneMask, lane 0 set; masked-off lanes load 0), so one vector
  // covers the last columns of a row without reading or writing past them. nullptr: none.
  void MaskLanes(llvm::Value* mask) { lane_mask_ = mask; }
  // The mask in force (nullptr: none): bodies that combine lanes put identities in the others.
  llvm::Value* lane_mask() const { return lane_mask_; }
  // The address of `access` at `idx`.
  llvm::Value* Address(int access, std::span<llvm::Value* const> idx) {
    return Pointer(access, Index(access, idx));
  }
  // The stride of `access` along `dim` (an i64 value, constant when known); 0 along a dim the
  // access does not have (a rank-0 kernel's accesses have none).
  llvm::Value* Stride(int access, int dim) const { return StrideOrZero(access, dim); }
  // The accesses `program` loads along a unit stride in `vec_dim` whose elements change with
  // the dims before it (not, say, a bias that every row reads again): the streams worth
  // prefetching, each once.
  std::vector<int> StreamedLoads(std::span<const ir::ExprNode> program, int vec_dim) const;
  // Prefetches into the L2 the lines of `access` at [idx, idx + width) along vec_dim, moved
  // `bytes` ahead: one prefetch per 64 bytes (at least one).
  void PrefetchAhead(int access, std::span<llvm::Value* const> idx, int width, int64_t bytes);

  // Checked kernels: the bounds check Load(access, idx, vec_dim, width) makes (of the lanes of
  // the mask in force), emitted on its own. Nothing in an unchecked kernel.
  void CheckLoad(int access, std::span<llvm::Value* const> idx, int vec_dim, int width) {
    CheckAccess(access, idx, vec_dim, width, /*store=*/false);
  }
  // The same for a load or (`store`) a store.
  void CheckAccess(int access, std::span<llvm::Value* const> idx, int vec_dim, int width,
                   bool store) {
    if (ec_.checked()) Check(access, Index(access, idx), vec_dim, width, store);
  }
  // While true, Load and Store emit no bounds check: the caller checked the loop they are in
  // before it (CheckLoad at its first and last iteration: an index is affine in the loop's
  // variable, so the iterations between touch nothing outside those two's range).
  void HoistChecks(bool hoisted) { checks_hoisted_ = hoisted; }

 private:
  llvm::Value* Pointer(int access, llvm::Value* index);
  // The vector of `width` element pointers index + lane * stride.
  llvm::Value* LanePointers(int access, llvm::Value* index, llvm::Value* stride, int width);
  // The bounds check of the elements a load or store of `width` points at `index` touches
  // (only the lanes of the mask in force).
  void Check(int access, llvm::Value* index, int vec_dim, int width, bool store);
  // Missing dims (rank-0 accesses) have stride 0.
  llvm::Value* StrideOrZero(int access, int dim) const;
  EmitContext& ec_;
  bool checks_hoisted_ = false;
  int streaming_access_ = -1;
  llvm::Value* lane_mask_ = nullptr;
  std::vector<llvm::Value*> offsets_;
  std::vector<std::vector<llvm::Value*>> strides_;
  std::vector<llvm::Value*> gather_strides_, gather_extents_;  // null for plain accesses
};

// The constant value of `v`, if it is a ConstantInt.
std::optional<int64_t> ConstantValue(llvm::Value* v);

// A read prefetch of the line at `address` (locality 3: into the L1, prefetcht0; 2: the L2,
// prefetcht1). Prefetches never fault: the address may lie past its buffer (a GEP without
// inbounds).
void EmitPrefetch(llvm::IRBuilderBase& b, llvm::Value* address, int locality, bool write = false);

// The i32 index along domain dim `dim` of the `width` points at idx advancing idx[vec_dim]
// (idx[dim] null or missing: 0): a splat, or consecutive indices along vec_dim; a scalar for
// width 1. Domain dims fit i32 wherever an iota is taken (kernels index elements, < 2^31 per
// dim on the tile plan's limits).
llvm::Value* DomainIndex(llvm::IRBuilderBase& b, std::span<llvm::Value* const> idx, int vec_dim,
                         int width, int dim);

}  // namespace pto::jit

#endif  // PTO_JIT_CODEGEN_EMIT_ACCESS_H_
