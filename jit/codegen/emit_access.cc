#include "jit/codegen/emit_access.h"

#include <algorithm>

#include "llvm/Analysis/VectorUtils.h"

namespace pto::jit {

std::optional<int64_t> ConstantValue(llvm::Value* v) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(v)) return c->getSExtValue();
  return std::nullopt;
}

namespace {

// For v = x + c with a constant c: c, and x in *rest. Otherwise nullopt (*rest untouched).
std::optional<int64_t> ConstantAddend(llvm::Value* v, llvm::Value** rest) {
  auto* sum = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if (sum == nullptr || sum->getOpcode() != llvm::Instruction::Add) return std::nullopt;
  const std::optional<int64_t> c = ConstantValue(sum->getOperand(1));
  if (c.has_value()) *rest = sum->getOperand(0);
  return c;
}

}  // namespace

void EmitPrefetch(llvm::IRBuilderBase& b, llvm::Value* address, int locality, bool write) {
  b.CreateIntrinsic(llvm::Intrinsic::prefetch, {address->getType()},
                    {address, b.getInt32(write ? 1 : 0), b.getInt32(locality), b.getInt32(1)});
}

AccessEmitter::AccessEmitter(EmitContext& ec) : ec_(ec) {
  for (const ir::Access& a : ec.kernel.accesses) {
    offsets_.push_back(ec.Sym(a.offset));
    std::vector<llvm::Value*> strides;
    for (const ir::SymExpr& s : a.strides) strides.push_back(ec.Sym(s));
    strides_.push_back(std::move(strides));
    gather_strides_.push_back(a.gather ? ec.Sym(a.gather_stride) : nullptr);
    gather_extents_.push_back(a.gather ? ec.Sym(a.gather_extent) : nullptr);
  }
}

llvm::Value* AccessEmitter::Index(int access, std::span<llvm::Value* const> idx) {
  llvm::IRBuilder<>& b = ec_.b;
  // The index is built as (variable terms) + (constant terms), the constant last: an index
  // moved by a constant (a micro-tile's row m0 + i, column n0 + j * width) then keeps the
  // variable part of its neighbours, and Pointer folds the constant into the address, where
  // (m0 + i) * stride for each row would keep a multiply and its operands live per row.
  llvm::Value* index = nullptr;
  int64_t constant = 0;
  // Wrapping, as the IR's adds and multiplies do.
  auto add_constant = [&](int64_t x, int64_t y) {
    constant = static_cast<int64_t>(static_cast<uint64_t>(constant) +
                                    static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
  };
  auto add = [&](llvm::Value* term) { index = index == nullptr ? term : b.CreateAdd(index, term); };
  if (std::optional<int64_t> o = ConstantValue(offsets_[access])) {
    add_constant(*o, 1);
  } else {
    add(offsets_[access]);
  }
  const std::vector<llvm::Value*>& strides = strides_[access];
  for (size_t d = 0; d < strides.size() && d < idx.size(); ++d) {
    if (idx[d] == nullptr) continue;
    const std::optional<int64_t> s = ConstantValue(strides[d]);
    if (s == 0) continue;
    llvm::Value* x = idx[d];
    const std::optional<int64_t> moved = s.has_value() ? ConstantAddend(x, &x) : std::nullopt;
    if (std::optional<int64_t> c = ConstantValue(x); c.has_value() && s.has_value()) {
      add_constant(*c, *s);
    } else {
      add(s == 1 ? x : b.CreateMul(x, strides[d]));
    }
    if (moved.has_value()) add_constant(*moved, *s);
  }
  if (index == nullptr) return ec_.I64Const(constant);
  return constant == 0 ? index : b.CreateAdd(index, ec_.I64Const(constant));
}

std::vector<int> AccessEmitter::StreamedLoads(std::span<const ir::ExprNode> program,
                                              int vec_dim) const {
  std::vector<int> streams;
  for (const ir::ExprNode& n : program) {
    if (n.op != ir::ExprOp::kLoad) continue;
    if (std::find(streams.begin(), streams.end(), n.access) != streams.end()) continue;
    if (ConstantValue(StrideOrZero(n.access, vec_dim)) != 1) continue;
    bool same_every_row = vec_dim > 0;
    for (int d = 0; d < vec_dim; ++d) {
      same_every_row &= ConstantValue(StrideOrZero(n.access, d)) == 0;
    }
    if (!same_every_row) streams.push_back(n.access);
  }
  return streams;
}

void AccessEmitter::PrefetchAhead(int access, std::span<llvm::Value* const> idx, int width,
                                  int64_t bytes) {
  llvm::IRBuilder<>& b = ec_.b;
  const int slot = ec_.kernel.accesses[access].buffer;
  llvm::Value* index = b.CreateAdd(Index(access, idx), ec_.I64Const(bytes / 4));
  for (int off = 0; off == 0 || off < width; off += 16) {  // 16 floats: a 64-byte line
    EmitPrefetch(b, b.CreateGEP(ec_.F32(), ec_.Buffer(slot), b.CreateAdd(index, ec_.I64Const(off))),
                 2);
  }
}

llvm::Value* AccessEmitter::StrideOrZero(int access, int dim) const {
  const std::vector<llvm::Value*>& strides = strides_[access];
  if (dim < 0 || dim >= static_cast<int>(strides.size())) return ec_.I64Const(0);
  return strides[dim];
}

llvm::Value* AccessEmitter::Pointer(int access, llvm::Value* index) {
  const int slot = ec_.kernel.accesses[access].buffer;
  llvm::Value* base = ec_.Buffer(slot);
  // Index's constant part as a GEP of its own: it becomes the address's displacement. Only a
  // forward one: the variable part then addresses an element at or before the accessed one,
  // within the buffer as the inbounds GEP requires.
  llvm::Value* variable = index;
  if (const std::optional<int64_t> c = ConstantAddend(index, &variable); c.value_or(0) > 0) {
    return ec_.b.CreateInBoundsGEP(ec_.F32(), ec_.b.CreateGEP(ec_.F32(), base, variable),
                                   ec_.I64Const(*c));
  }
  return ec_.b.CreateInBoundsGEP(ec_.F32(), base, index);
}

llvm::Value* AccessEmitter::LanePointers(int access, llvm::Value* index, llvm::Value* stride,
                                         int width) {
  llvm::IRBuilder<>& b = ec_.b;
  llvm::Value* at =
      b.CreateAdd(b.CreateVectorSplat(width, index),
                  b.CreateMul(ec_.LaneIndices(width), b.CreateVectorSplat(width, stride)));
  const int slot = ec_.kernel.accesses[access].buffer;
  return b.CreateInBoundsGEP(ec_.F32(), ec_.Buffer(slot), at);
}

void AccessEmitter::Check(int access, llvm::Value* index, int vec_dim, int width, bool store) {
  if (!ec_.checked()) return;
  const int slot = ec_.kernel.accesses[access].buffer;
  if (width == 1 || vec_dim < 0) {  // one element (a load splats it)
    ec_.Check(slot, index, nullptr, 1, nullptr, store);
    return;
  }
  ec_.Check(slot, index, StrideOrZero(access, vec_dim), width, lane_mask_, store);
}

llvm::Value* AccessEmitter::Load(int access, std::span<llvm::Value* const> idx, int vec_dim,
                                 int width) {
  llvm::IRBuilder<>& b = ec_.b;
  const int slot = ec_.kernel.accesses[access].buffer;
  llvm::Value* index = Index(access, idx);
  if (!checks_hoisted_) Check(access, index, vec_dim, width, /*store=*/false);
  llvm::Type* element = ec_.ElementType(ec_.kernel.accesses[access].dtype);
  auto scalar_load = [&](llvm::Value* at) {
    llvm::LoadInst* l = b.CreateAlignedLoad(element, Pointer(access, at), llvm::Align(4));
    ec_.AnnotateSlot(l, slot);
    return l;
  };
  if (width == 1 || vec_dim < 0) {
    llvm::Value* v = scalar_load(index);
    return width == 1 ? v : b.CreateVectorSplat(width, v);
  }
  llvm::Value* stride = StrideOrZero(access, vec_dim);
  std::optional<int64_t> s = ConstantValue(stride);
  if (s == 0) return b.CreateVectorSplat(width, scalar_load(index));
  llvm::Type* vt = llvm::FixedVectorType::get(element, width);
  if (lane_mask_ != nullptr) {
    llvm::Value* zero = llvm::Constant::getNullValue(vt);
    llvm::CallInst* l =
        s == 1 ? b.CreateMaskedLoad(vt, Pointer(access, index), llvm::Align(4), lane_mask_, zero)
               : b.CreateMaskedGather(vt, LanePointers(access, index, stride, width),
                                      llvm::Align(4), lane_mask_, zero);
    ec_.AnnotateSlot(l, slot);
    return l;
  }
  if (s == 1) {
    llvm::LoadInst* l = b.CreateAlignedLoad(vt, Pointer(access, index), llvm::Align(4));
    ec_.AnnotateSlot(l, slot);
    return l;
  }
  llvm::Value* v = llvm::PoisonValue::get(vt);
  for (int lane = 0; lane < width; ++lane) {
    llvm::Value* at = b.CreateAdd(index, b.CreateMul(stride, ec_.I64Const(lane)));
    v = b.CreateInsertElement(v, scalar_load(at), static_cast<uint64_t>(lane));
  }
  return v;
}

llvm::Value* AccessEmitter::Gather(int access, std::span<llvm::Value* const> idx, int vec_dim,
                                   int width, llvm::Value* index) {
  llvm::IRBuilder<>& b = ec_.b;
  const int slot = ec_.kernel.accesses[access].buffer;
  llvm::Value* base = Index(access, idx);
  llvm::Value* extent = gather_extents_[access];
  llvm::Value* gstride = gather_strides_[access];
  const int lanes = std::max(1, width);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* i64v = llvm::FixedVectorType::get(i64, lanes);
  // Lane i reads base + i * stride(vec_dim) + index[i] * gather_stride, when index[i] is in
  // [0, extent): an unsigned compare of the sign-extended index also refuses negatives.
  llvm::Value* wide = index->getType()->isVectorTy()
                          ? b.CreateSExt(index, i64v)
                          : b.CreateVectorSplat(1, b.CreateSExt(index, i64));
  llvm::Value* in_range = b.CreateICmpULT(wide, b.CreateVectorSplat(lanes, extent));
  llvm::Value* mask = in_range;
  if (lane_mask_ != nullptr && width > 1) mask = b.CreateAnd(mask, lane_mask_);
  if (ec_.checked() && !checks_hoisted_) {
    // Every lane read lies between the access at index 0 and at extent - 1 (an index is affine
    // in the address); with extent 0 nothing is read and nothing is checked.
    llvm::Value* any = b.CreateICmpSGT(extent, ec_.I64Const(0));
    llvm::Value* last =
        b.CreateAdd(base, b.CreateMul(b.CreateSub(extent, ec_.I64Const(1)), gstride));
    llvm::Value* check_mask =
        width > 1
            ? (lane_mask_ != nullptr ? b.CreateAnd(lane_mask_, b.CreateVectorSplat(width, any))
                                     : b.CreateVectorSplat(width, any))
            : nullptr;
    llvm::Value* stride = width > 1 && vec_dim >= 0 ? StrideOrZero(access, vec_dim) : nullptr;
    for (llvm::Value* at : {base, last}) {
      if (width > 1 && vec_dim >= 0) {
        ec_.Check(slot, b.CreateSelect(any, at, base), stride, width, check_mask, false);
      } else {
        ec_.Check(slot, b.CreateSelect(any, at, base), nullptr, 1, nullptr, false);
      }
    }
  }
  llvm::Value* lane_stride =
      width > 1 && vec_dim >= 0 ? StrideOrZero(access, vec_dim) : ec_.I64Const(0);
  llvm::Type* vt = llvm::FixedVectorType::get(ec_.F32(), lanes);
  llvm::Value* nan = llvm::ConstantFP::getQNaN(vt);
  // One index for all lanes along a unit stride (an embedding row): one masked vector load.
  llvm::Value* uniform = lanes > 1 ? llvm::getSplatValue(index) : nullptr;
  if (uniform != nullptr && ConstantValue(lane_stride) == 1) {
    llvm::Value* j = b.CreateSExt(uniform, i64);
    llvm::Value* row_mask = b.CreateVectorSplat(lanes, b.CreateICmpULT(j, extent));
    if (lane_mask_ != nullptr) row_mask = b.CreateAnd(row_mask, lane_mask_);
    llvm::Value* ptr =
        b.CreateGEP(ec_.F32(), ec_.Buffer(slot), b.CreateAdd(base, b.CreateMul(j, gstride)));
    llvm::CallInst* l = b.CreateMaskedLoad(vt, ptr, llvm::Align(4), row_mask, nan);
    ec_.AnnotateSlot(l, slot);
    return l;
  }
  llvm::Value* at = b.CreateAdd(b.CreateVectorSplat(lanes, base),
                                b.CreateMul(wide, b.CreateVectorSplat(lanes, gstride)));
  if (lanes > 1) {
    llvm::Value* lane_ids = ec_.LaneIndices(lanes);
    at = b.CreateAdd(at, b.CreateMul(lane_ids, b.CreateVectorSplat(lanes, lane_stride)));
  }
  // No inbounds: a masked-off lane's address may lie anywhere.
  llvm::Value* ptrs = b.CreateGEP(ec_.F32(), ec_.Buffer(slot), at);
  llvm::CallInst* l = b.CreateMaskedGather(vt, ptrs, llvm::Align(4), mask, nan);
  ec_.AnnotateSlot(l, slot);
  if (width <= 1) return b.CreateExtractElement(l, uint64_t{0});
  return l;
}

void AccessEmitter::Store(int access, std::span<llvm::Value* const> idx, int vec_dim, int width,
                          llvm::Value* value) {
  llvm::IRBuilder<>& b = ec_.b;
  const int slot = ec_.kernel.accesses[access].buffer;
  llvm::Value* index = Index(access, idx);
  if (!checks_hoisted_) Check(access, index, vec_dim, width, /*store=*/true);
  auto scalar_store = [&](llvm::Value* v, llvm::Value* at) {
    llvm::StoreInst* st = b.CreateAlignedStore(v, Pointer(access, at), llvm::Align(4));
    ec_.AnnotateSlot(st, slot);
  };
  if (width == 1) {
    scalar_store(value, index);
    return;
  }
  llvm::Value* stride = StrideOrZero(access, vec_dim);
  if (lane_mask_ != nullptr) {
    // A scatter's lanes are stored in order, so with stride 0 the last set lane's value stays.
    llvm::CallInst* st =
        ConstantValue(stride) == 1
            ? b.CreateMaskedStore(value, Pointer(access, index), llvm::Align(4), lane_mask_)
            : b.CreateMaskedScatter(value, LanePointers(access, index, stride, width),
                                    llvm::Align(4), lane_mask_);
    ec_.AnnotateSlot(st, slot);
    return;
  }
  if (ConstantValue(stride) == 1) {
    const bool streaming = access == streaming_access_ && width % ec_.lanes == 0;
    llvm::StoreInst* st = b.CreateAlignedStore(value, Pointer(access, index),
                                               llvm::Align(streaming ? int64_t{4} * ec_.lanes : 4));
    if (streaming) {
      st->setMetadata(llvm::LLVMContext::MD_nontemporal,
                      llvm::MDNode::get(ec_.ctx, llvm::ConstantAsMetadata::get(b.getInt32(1))));
    }
    ec_.AnnotateSlot(st, slot);
    return;
  }
  // Lanes in order, so with stride 0 the last lane's value is the one left in memory.
  for (int lane = 0; lane < width; ++lane) {
    llvm::Value* at = b.CreateAdd(index, b.CreateMul(stride, ec_.I64Const(lane)));
    scalar_store(b.CreateExtractElement(value, static_cast<uint64_t>(lane)), at);
  }
}

llvm::Value* DomainIndex(llvm::IRBuilderBase& b, std::span<llvm::Value* const> idx, int vec_dim,
                         int width, int dim) {
  llvm::Value* at = dim < static_cast<int>(idx.size()) && idx[dim] != nullptr
                        ? b.CreateTrunc(idx[dim], b.getInt32Ty())
                        : b.getInt32(0);
  if (width == 1) return at;
  llvm::Value* splat = b.CreateVectorSplat(width, at);
  if (dim != vec_dim) return splat;
  std::vector<llvm::Constant*> lanes;
  for (int i = 0; i < width; ++i) lanes.push_back(b.getInt32(static_cast<uint32_t>(i)));
  return b.CreateAdd(splat, llvm::ConstantVector::get(lanes));
}

}  // namespace pto::jit
