#include "jit/passes/mark_in_place.h"

#include <vector>

namespace pto::jit {
namespace {

bool SameAccess(const ir::Access& a, const ir::Access& b) {
  return a.offset == b.offset && a.strides == b.strides && a.dtype == b.dtype && !a.gather &&
         !b.gather;
}

// Row-major contiguous over the domain (any stride along a dim of extent 1): distinct points
// get distinct elements.
bool DenseOverDomain(const ir::Access& a, const ir::Shape& domain) {
  if (a.strides.size() != domain.size()) return false;
  const std::vector<ir::SymExpr> dense = ir::ContiguousStrides(domain);
  for (size_t d = 0; d < domain.size(); ++d) {
    if (a.strides[d] != dense[d] && domain[d] != ir::SymExpr(1)) return false;
  }
  return true;
}

// Nodes of `program` that `root` depends on.
std::vector<bool> Reaches(const std::vector<ir::ExprNode>& program, int root) {
  std::vector<bool> used(program.size(), false);
  if (root < 0 || root >= static_cast<int>(program.size())) return used;
  used[root] = true;
  for (int i = root; i >= 0; --i) {
    if (!used[i]) continue;
    if (program[i].a >= 0) used[program[i].a] = true;
    if (program[i].b >= 0) used[program[i].b] = true;
  }
  return used;
}

// Whether every load of a kernel buffer slot in `program` is among `used`.
bool LoadsOfSlotUsed(const ir::Kernel& k, const std::vector<ir::ExprNode>& program,
                     const std::vector<bool>& used, int slot) {
  for (size_t i = 0; i < program.size(); ++i) {
    const ir::ExprNode& n = program[i];
    if (n.op == ir::ExprOp::kLoad && k.accesses[n.access].buffer == slot && !used[i]) return false;
  }
  return true;
}

bool AnyAcc(const std::vector<ir::ExprNode>& program, const std::vector<bool>& used) {
  for (size_t i = 0; i < program.size(); ++i) {
    if (used[i] && program[i].op == ir::ExprOp::kAcc) return true;
  }
  return false;
}

// Whether store `s` of kernel `k` may overwrite kernel buffer slot `in` in place (see the
// header for the rules; liveness is checked by the caller).
bool StoreMayOverwrite(const ir::Kernel& k, const ir::Store& s, int in) {
  const ir::Access& out = k.accesses[s.access];
  if (!DenseOverDomain(out, k.domain)) return false;
  bool read = false;
  for (const ir::Access& a : k.accesses) {
    if (a.buffer != in) continue;
    if (!SameAccess(a, out)) return false;
    read = true;
  }
  if (!read) return false;
  const std::vector<bool> used = Reaches(k.output, s.value);
  if (!LoadsOfSlotUsed(k, k.output, used, in)) return false;
  if (k.kind == ir::KernelKind::kRowOp) {
    std::vector<bool> used_in = Reaches(k.input, k.input_value);
    const std::vector<bool> used_dy = Reaches(k.input, k.input_dy);
    for (size_t i = 0; i < used_in.size(); ++i) used_in[i] = used_in[i] || used_dy[i];
    if (!LoadsOfSlotUsed(k, k.input, used_in, in)) return false;
    // Loads of `in` in the input program reach the store only through kAcc.
    bool in_input = false;
    for (const ir::ExprNode& n : k.input) {
      in_input = in_input || (n.op == ir::ExprOp::kLoad && k.accesses[n.access].buffer == in);
    }
    if (in_input && !AnyAcc(k.output, used)) return false;
  }
  return true;
}

}  // namespace

bool KernelMayWriteOver(const ir::KernelCall& call, const ir::Store& store, int in) {
  const ir::Kernel& k = call.kernel;
  if (k.kind != ir::KernelKind::kElementwise && k.kind != ir::KernelKind::kRowOp) return false;
  const int slots = static_cast<int>(call.buffers.size());
  const int out = k.accesses[store.access].buffer;
  if (in < 0 || in >= slots || in == out || call.buffers[in] == call.buffers[out]) return false;
  int out_stores = 0, out_accesses = 0, in_stores = 0;
  for (const ir::Access& a : k.accesses) out_accesses += a.buffer == out;
  for (const ir::Store& st : k.stores) {
    out_stores += k.accesses[st.access].buffer == out;
    in_stores += k.accesses[st.access].buffer == in;
  }
  // One store, and its access is the slot's only access (no loads of the output).
  if (out_stores != 1 || out_accesses != 1 || in_stores != 0) return false;
  // The same TileGraph buffer bound to two kernel slots: keep it simple, no pair.
  for (int j = 0; j < slots; ++j) {
    if (j != in && call.buffers[j] == call.buffers[in]) return false;
  }
  return StoreMayOverwrite(k, store, in);
}

void MarkInPlace(ir::TileGraph& tiles) {
  std::vector<int> first, last;
  ir::BufferLifetimes(tiles, &first, &last);
  auto is_temp = [&](int b) { return tiles.buffers[b].kind == ir::BufferKind::kTemp; };
  for (int c = 0; c < static_cast<int>(tiles.calls.size()); ++c) {
    ir::KernelCall& call = tiles.calls[c];
    call.in_place.clear();
    const ir::Kernel& k = call.kernel;
    if (k.kind != ir::KernelKind::kElementwise && k.kind != ir::KernelKind::kRowOp) continue;
    const int slots = static_cast<int>(call.buffers.size());
    std::vector<bool> taken(slots, false);  // kernel slots already paired
    for (const ir::Store& s : k.stores) {
      const int out = k.accesses[s.access].buffer;
      const int ob = call.buffers[out];
      if (taken[out] || !is_temp(ob) || first[ob] != c) continue;
      for (int in = 0; in < slots; ++in) {
        const int ib = call.buffers[in];
        if (taken[in] || !is_temp(ib) || last[ib] != c) continue;
        if (tiles.buffers[ib].dtype != tiles.buffers[ob].dtype) continue;
        if (!KernelMayWriteOver(call, s, in)) continue;
        call.in_place.emplace_back(ob, ib);
        taken[out] = taken[in] = true;
        break;
      }
    }
  }
}

}  // namespace pto::jit
