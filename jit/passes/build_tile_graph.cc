#include "jit/passes/build_tile_graph.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "jit/graph/limits.h"
#include "jit/passes/graph_rewrite.h"
#include "jit/plan.h"
#include "ops/derived_symbols.h"
#include "ops/lowering.h"

namespace pto::jit {
namespace {

using ir::ExprNode;
using ir::ExprOp;
using ir::OpKind;
using ir::Shape;
using ir::SymExpr;

// How one dim of a node is indexed from the kernel's domain: offset + scale * domain[dom]
// (dom = -1: the constant offset).
struct DimMap {
  int dom = -1;
  SymExpr scale = 1;
  SymExpr offset = 0;
};
using IndexMap = std::vector<DimMap>;

// A node's values as a strided window of a buffer: element = offset + sum(idx[d]*strides[d]).
struct View {
  int buffer = -1;
  SymExpr offset;
  std::vector<SymExpr> strides;
};

// A matmul whose A is not contiguous along K reads a copy of A in rows of [M, K] when it has
// at least this many (static) columns: the copy is one pass over A, which the matmul's tasks of
// a few column blocks each read again. Narrower matmuls copy A a K block at a time into their
// scratch (jit/codegen/matmul_scratch.h), where it stays in the cache.
constexpr int64_t kCopyARowsMinColumns = 256;
bool CopyARows(const SymExpr& n) { return n.IsConstant() && n.constant() >= kCopyARowsMinColumns; }

IndexMap Identity(size_t rank) {
  IndexMap m(rank);
  for (size_t d = 0; d < rank; ++d) m[d].dom = static_cast<int>(d);
  return m;
}

bool IsOne(const SymExpr& e) { return e.AsConstant() == 1; }

// Map of an operand (numpy broadcasting, right-aligned) given the map of the result.
IndexMap BroadcastMap(const Shape& operand, const Shape& result, const IndexMap& result_map) {
  IndexMap m(operand.size());
  const size_t lead = result.size() - operand.size();
  for (size_t d = 0; d < operand.size(); ++d) {
    if (IsOne(operand[d]) && !IsOne(result[lead + d])) continue;  // broadcast: index 0
    m[d] = result_map[lead + d];
  }
  return m;
}

// The strides of a transpose's result: its dim i is its input's dim permutation[i].
std::vector<SymExpr> TransposedStrides(const std::vector<SymExpr>& strides,
                                       const std::vector<int64_t>& permutation) {
  std::vector<SymExpr> out(permutation.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = strides[permutation[i]];
  return out;
}

// PyTorch's computeStride: strides for viewing (shape, strides) as new_shape without a copy.
std::optional<std::vector<SymExpr>> ReshapeStrides(const Shape& shape,
                                                   const std::vector<SymExpr>& strides,
                                                   const Shape& new_shape) {
  std::vector<SymExpr> out(new_shape.size());
  if (shape.empty()) {
    for (auto& s : out) s = 1;
    return out;
  }
  int view_d = static_cast<int>(new_shape.size()) - 1;
  SymExpr chunk_base_stride = strides.back();
  SymExpr tensor_numel = 1, view_numel = 1;
  for (int tensor_d = static_cast<int>(shape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel = tensor_numel * shape[tensor_d];
    if (tensor_d == 0 || (!IsOne(shape[tensor_d - 1]) &&
                          strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel != tensor_numel || IsOne(new_shape[view_d]))) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel = view_numel * new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

class Builder {
 public:
  Builder(const ir::Graph& graph, const FusionGroups& groups)
      : g_(graph),
        groups_(groups),
        consumers_(Consumers(graph)),
        node_buffer_(graph.nodes.size(), -1),
        view_base_(graph.nodes.size()),
        resolved_(graph.nodes.size()) {
    tiles_.symbols = graph.symbols;
    for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
      const bool index_view =
          groups.role[i] == NodeRole::kView &&
          (graph.nodes[i].op == OpKind::kTranspose || graph.nodes[i].op == OpKind::kSlice);
      view_base_[i] = index_view ? view_base_[graph.nodes[i].inputs[0]] : i;
    }
  }

  absl::StatusOr<ir::TileGraph> Build();

 private:
  struct KernelBuilder {
    ir::Kernel kernel;
    std::vector<int> slot_buffer;
    int anchor = -1;  // the node whose value is kAcc in `output`
    std::vector<std::string> op_names;
    std::vector<int> nodes;   // the graph nodes whose ops it computes
    std::vector<int> stored;  // NodeRole::kStoredInline nodes and epilogue values it stores
    std::vector<std::pair<int, int>> stored_buffers;  // epilogue value -> its buffer

    int Slot(int buffer) {
      for (size_t s = 0; s < slot_buffer.size(); ++s) {
        if (slot_buffer[s] == buffer) return static_cast<int>(s);
      }
      slot_buffer.push_back(buffer);
      return static_cast<int>(slot_buffer.size()) - 1;
    }
    int AddAccess(int buffer, SymExpr offset, std::vector<SymExpr> strides,
                  ir::DType dtype = ir::DType::kF32) {
      ir::Access a;
      a.buffer = Slot(buffer);
      a.offset = std::move(offset);
      a.strides = std::move(strides);
      a.dtype = dtype;
      for (size_t i = 0; i < kernel.accesses.size(); ++i) {
        const ir::Access& b = kernel.accesses[i];
        if (b.buffer == a.buffer && b.offset == a.offset && b.strides == a.strides &&
            b.dtype == a.dtype) {
          return static_cast<int>(i);
        }
      }
      kernel.accesses.push_back(std::move(a));
      return static_cast<int>(kernel.accesses.size()) - 1;
    }
  };

  // `node`: the graph node it holds contiguously, or -1 (an f32 copy laid out for a matmul).
  // The buffer has the node's dtype.
  int NewBuffer(ir::BufferKind kind, int index, const Shape& shape, std::string label, int node) {
    ir::Buffer b;
    b.kind = kind;
    b.index = index;
    b.elements = ir::NumElements(shape);
    b.dtype = node >= 0 ? g_.nodes[node].dtype : ir::DType::kF32;
    b.label = std::move(label);
    b.node = node;
    tiles_.buffers.push_back(std::move(b));
    return static_cast<int>(tiles_.buffers.size()) - 1;
  }
  std::string Label(int node) const {
    return absl::StrCat("%", node, " ", ir::OpName(g_.nodes[node].op));
  }

  View ContiguousView(int buffer, const Shape& shape) {
    return View{buffer, SymExpr(0), ir::ContiguousStrides(shape)};
  }
  View ResolveView(int node);
  // The view `node` (a kView node) makes of `input`, the view of its input.
  View ApplyView(int node, View input);
  // A contiguous copy of a value computed inline elsewhere.
  View Materialize(int node);
  // Whether the value of `node` can be read from memory (its buffer, a copy, a stored view, or
  // a reshape of one) rather than recomputed.
  bool Addressable(int node) const;
  int CopyToBuffer(const View& view, const Shape& shape, std::string label, int node);
  // The access of `view` indexed through `map` from the kernel's domain.
  int ComposedAccess(KernelBuilder& kb, const View& view, const IndexMap& map);
  int Load(KernelBuilder& kb, std::vector<ExprNode>& prog, const View& view, const IndexMap& map);
  int Push(std::vector<ExprNode>& prog, ExprNode n) {
    prog.push_back(n);
    return static_cast<int>(prog.size()) - 1;
  }
  ir::DType BufferDType(int buffer) const { return tiles_.buffers[buffer].dtype; }
  // The i32 index a dim of `map` reads along the kernel's domain (an iota, scaled and offset);
  // nullopt when its scale or offset is not a constant that fits i32 (a slice of a symbolic
  // dim): the caller then reads the value from memory.
  std::optional<int> IndexExpr(std::vector<ExprNode>& prog, const DimMap& d);
  // gather: its indices computed (or loaded) at the point, then x (in memory) read through a
  // gather access moved by them.
  absl::StatusOr<int> GatherExpr(KernelBuilder& kb, std::vector<ExprNode>& prog, int node,
                                 const IndexMap& map);
  // iota and one_hot, computed from the domain's indices (or loaded, see IndexExpr).
  absl::StatusOr<int> IndexingExpr(KernelBuilder& kb, std::vector<ExprNode>& prog, int node,
                                   const IndexMap& map);
  absl::StatusOr<int> Expr(KernelBuilder& kb, std::vector<ExprNode>& prog, int node, IndexMap map);
  absl::StatusOr<int> AnchorExpr(KernelBuilder& kb, std::vector<ExprNode>& prog,
                                 const IndexMap& map);
  // A backward row op's second row (ir::Kernel::input_dy), in the kernel's input program.
  absl::StatusOr<int> RowGradOperand(KernelBuilder& kb, const ir::Node& a, const IndexMap& map);
  void Store(KernelBuilder& kb, int value, const View& view, const IndexMap& map);
  void Finish(KernelBuilder kb, const std::string& kind);

  // One elementwise kernel computing `node` (over its shape) into the window `out`.
  absl::Status BuildElementwise(int node, const View& out, const std::string& kind);
  absl::Status BuildGroup(int anchor, int root, const View& out);
  // The strided view a matmul root is stored through when its one use is a transpose whose
  // one use is a reshape that needs the transposed values contiguous (attention's heads
  // merged back, [b, h, s, d] -> [b, s, h * d]): storing in that layout spares the copy.
  std::optional<View> MergedStoreView(int root);
  absl::Status BuildConcat(int node, int buffer);
  // Plans the roots computed straight into their window of a concat's result: a root (an
  // elementwise or anchored group's) whose one use is the concat, directly or through
  // reshapes the window allows and transposes (attention's per-head gradients merged back),
  // each the only use of its input, and that is no Function output. The concat then copies only
  // its other inputs.
  void PlanConcatWindows();
  // The buffer of concat `node`: its output buffer, or a temp made at the first use.
  int ConcatBuffer(int node);
  // A scatter_add kernel (ir::KernelKind::kScatterAdd) writing `node` into `buffer`.
  absl::Status BuildScatterAdd(int node, int buffer);
  // `node` (in memory) viewed as `shape`, a flattening of its own shape: its view reshaped, or a
  // contiguous copy's.
  View FlatView(int node, const Shape& shape);

  const ir::Graph& g_;
  const FusionGroups& groups_;
  const std::vector<std::vector<int>> consumers_;  // Consumers(g_)
  ir::TileGraph tiles_;
  std::vector<int> node_buffer_;  // buffer holding the node's values, contiguous
  std::map<int, int> copies_;     // node -> buffer of its materialized contiguous copy
  std::map<int, View> views_;     // node -> the strided view it was stored through
  // PlanConcatWindows: root -> {the concat, the window as a view in the root's shape (buffer
  // unset)}; concat -> per input, whether it is computed in its window; concat -> buffer.
  struct Window {
    int concat = -1;
    View view;
  };
  std::map<int, Window> windows_;
  std::map<int, std::vector<bool>> in_window_;
  std::map<int, int> concat_buffer_;
  std::vector<int> output_buffer_;  // per node: the Function output buffer it is computed into
  // Per slice node: the index its first element has in the input (a constant, a polynomial or
  // a derived symbol: ops/derived_symbols.h).
  std::vector<SymExpr> slice_start_;
  // Per node: the node under its chain of index views (transposes and slices), or itself.
  std::vector<int> view_base_;
  // Per kView node: its view once resolved (a long chain of views is walked once).
  std::vector<std::optional<View>> resolved_;
};

// Walks down the chain of views to the first node with a known view, then applies the views
// on the way back up: iterative, so a chain of any length takes no stack.
View Builder::ResolveView(int node) {
  std::vector<int> chain;  // views still to apply, outermost first
  std::optional<View> v;
  for (int x = node; !v.has_value();) {
    const Shape& shape = g_.nodes[x].shape;
    if (node_buffer_[x] >= 0) {
      v = ContiguousView(node_buffer_[x], shape);
    } else if (auto it = views_.find(x); it != views_.end()) {
      v = it->second;
    } else if (auto copy = copies_.find(x); copy != copies_.end()) {
      v = ContiguousView(copy->second, shape);
    } else if (resolved_[x].has_value()) {
      v = resolved_[x];
    } else if (groups_.role[x] == NodeRole::kView) {
      chain.push_back(x);
      x = g_.nodes[x].inputs[0];
    } else {
      v = Materialize(x);
    }
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    v = ApplyView(*it, *std::move(v));
    resolved_[*it] = v;
  }
  return *std::move(v);
}

View Builder::ApplyView(int node, View v) {
  const ir::Node& n = g_.nodes[node];
  const ir::Node& in = g_.nodes[n.inputs[0]];
  switch (n.op) {
    case OpKind::kTranspose:
      v.strides = TransposedStrides(v.strides, n.attrs.ints);
      return v;
    case OpKind::kSlice: {
      const int64_t axis = n.attrs.axis;
      v.offset = v.offset + slice_start_[node] * v.strides[axis];
      v.strides[axis] = v.strides[axis] * SymExpr(n.attrs.step);
      return v;
    }
    default: {  // kReshape
      assert(n.op == OpKind::kReshape);
      if (auto strides = ReshapeStrides(in.shape, v.strides, n.shape)) {
        v.strides = *std::move(strides);
        return v;
      }
      // Not expressible as a view of that window: copy the input contiguously first.
      int copy =
          CopyToBuffer(v, in.shape, Label(n.inputs[0]) + " (contiguous for reshape)", n.inputs[0]);
      copies_[n.inputs[0]] = copy;
      return ContiguousView(copy, n.shape);
    }
  }
}

View Builder::Materialize(int node) {
  const ir::Node& n = g_.nodes[node];
  int copy = NewBuffer(ir::BufferKind::kTemp, 0, n.shape, Label(node) + " (materialized)", node);
  // Cannot fail for nodes the fusion pass accepted (Expr fails only on ops that shape
  // inference rejected at trace time).
  absl::Status built = BuildElementwise(node, ContiguousView(copy, n.shape), "copy");
  assert(built.ok());
  (void)built;
  copies_[node] = copy;
  return ContiguousView(copy, n.shape);
}

bool Builder::Addressable(int node) const {
  const NodeRole role = groups_.role[node];
  return node_buffer_[node] >= 0 || copies_.count(node) > 0 || views_.count(node) > 0 ||
         role == NodeRole::kInput ||
         (role == NodeRole::kView && g_.nodes[node].op == OpKind::kReshape);
}

int Builder::CopyToBuffer(const View& view, const Shape& shape, std::string label, int node) {
  int buffer = NewBuffer(ir::BufferKind::kTemp, 0, shape, std::move(label), node);
  KernelBuilder kb;
  kb.kernel.kind = ir::KernelKind::kElementwise;
  // The kernel runs along the source's contiguous dim when the destination's is another (a
  // transpose): vector loads and scattered stores into lines the next rows fill, rather than
  // loads strided across the source, whose lines often share a few cache sets.
  const size_t rank = shape.size();
  IndexMap map = Identity(rank);
  kb.kernel.domain = shape;
  if (rank >= 2 && !IsOne(view.strides[rank - 1])) {
    for (size_t d = 0; d + 1 < rank; ++d) {
      if (!IsOne(view.strides[d]) || IsOne(shape[d])) continue;
      std::swap(kb.kernel.domain[d], kb.kernel.domain[rank - 1]);
      map[d].dom = static_cast<int>(rank - 1);
      map[rank - 1].dom = static_cast<int>(d);
      break;
    }
  }
  int v = Load(kb, kb.kernel.output, view, map);
  Store(kb, v, ContiguousView(buffer, shape), map);
  Finish(std::move(kb), "copy");
  return buffer;
}

int Builder::ComposedAccess(KernelBuilder& kb, const View& view, const IndexMap& map) {
  SymExpr offset = view.offset;
  std::vector<SymExpr> strides(kb.kernel.domain.size(), SymExpr(0));
  for (size_t d = 0; d < map.size(); ++d) {
    offset = offset + view.strides[d] * map[d].offset;
    if (map[d].dom >= 0) strides[map[d].dom] = strides[map[d].dom] + view.strides[d] * map[d].scale;
  }
  return kb.AddAccess(view.buffer, std::move(offset), std::move(strides), BufferDType(view.buffer));
}

int Builder::Load(KernelBuilder& kb, std::vector<ExprNode>& prog, const View& view,
                  const IndexMap& map) {
  ExprNode n;
  n.op = ExprOp::kLoad;
  n.access = ComposedAccess(kb, view, map);
  n.dtype = kb.kernel.accesses[n.access].dtype;
  return Push(prog, n);
}

std::optional<int> Builder::IndexExpr(std::vector<ExprNode>& prog, const DimMap& d) {
  auto fits = [](const std::optional<int64_t>& v) {
    return v.has_value() && *v >= INT32_MIN && *v <= INT32_MAX;
  };
  const std::optional<int64_t> scale = d.scale.AsConstant(), offset = d.offset.AsConstant();
  if (!fits(offset) || (d.dom >= 0 && !fits(scale))) return std::nullopt;
  auto constant = [&](int64_t v) {
    ExprNode c;
    c.op = ExprOp::kConst;
    c.dtype = ir::DType::kI32;
    c.ivalue = static_cast<int32_t>(v);
    return Push(prog, c);
  };
  if (d.dom < 0) return constant(*offset);
  ExprNode iota;
  iota.op = ExprOp::kIota;
  iota.dtype = ir::DType::kI32;
  iota.axis = d.dom;
  int v = Push(prog, iota);
  if (*scale != 1)
    v = Push(prog, ExprNode{ExprOp::kMul, v, constant(*scale), -1, 0, -1, ir::DType::kI32});
  if (*offset != 0)
    v = Push(prog, ExprNode{ExprOp::kAdd, v, constant(*offset), -1, 0, -1, ir::DType::kI32});
  return v;
}

absl::StatusOr<int> Builder::IndexingExpr(KernelBuilder& kb, std::vector<ExprNode>& prog, int node,
                                          const IndexMap& map) {
  const ir::Node& n = g_.nodes[node];
  // iota: the index along its axis; one_hot: whether the index along the last axis equals the
  // indices' element there.
  const DimMap& d = n.op == OpKind::kIota ? map[n.attrs.axis] : map.back();
  std::optional<int> index = IndexExpr(prog, d);
  if (!index.has_value()) return Load(kb, prog, ResolveView(node), map);
  kb.op_names.emplace_back(ir::OpName(n.op));
  kb.nodes.push_back(node);
  if (n.op == OpKind::kIota) return *index;
  const IndexMap indices_map(map.begin(), map.end() - 1);
  absl::StatusOr<int> indices = Expr(kb, prog, n.inputs[0], indices_map);
  if (!indices.ok()) return indices.status();
  return Push(prog, ExprNode{ExprOp::kEq, *indices, *index});
}

absl::StatusOr<int> Builder::GatherExpr(KernelBuilder& kb, std::vector<ExprNode>& prog, int node,
                                        const IndexMap& map) {
  const ir::Node& n = g_.nodes[node];
  const int x = n.inputs[0];
  const size_t axis = static_cast<size_t>(n.attrs.axis);
  const size_t r = g_.nodes[n.inputs[1]].shape.size();
  kb.op_names.emplace_back(ir::OpName(n.op));
  kb.nodes.push_back(node);
  const IndexMap indices_map(map.begin() + axis, map.begin() + axis + r);
  absl::StatusOr<int> index = Expr(kb, prog, n.inputs[1], indices_map);
  if (!index.ok()) return index.status();
  // x's dims around the axis follow the result's; the axis itself moves by the index. x is in
  // memory (the fusion groups give a gathered value a buffer; ResolveView copies it otherwise).
  const View view = ResolveView(x);
  ir::Access a;
  a.buffer = kb.Slot(view.buffer);
  a.offset = view.offset;
  a.strides.assign(kb.kernel.domain.size(), SymExpr(0));
  a.dtype = ir::DType::kF32;
  for (size_t d = 0; d < view.strides.size(); ++d) {
    if (d == axis) continue;
    const DimMap& m = map[d < axis ? d : d + r - 1];
    a.offset = a.offset + view.strides[d] * m.offset;
    if (m.dom >= 0) a.strides[m.dom] = a.strides[m.dom] + view.strides[d] * m.scale;
  }
  a.gather = true;
  a.gather_stride = view.strides[axis];
  a.gather_extent = g_.nodes[x].shape[axis];
  kb.kernel.accesses.push_back(std::move(a));
  ExprNode e;
  e.op = ExprOp::kGather;
  e.a = *index;
  e.access = static_cast<int>(kb.kernel.accesses.size()) - 1;
  return Push(prog, e);
}

void Builder::Store(KernelBuilder& kb, int value, const View& view, const IndexMap& map) {
  ir::Store s;
  s.access = ComposedAccess(kb, view, map);
  s.value = value;
  kb.kernel.stores.push_back(s);
}

absl::StatusOr<int> Builder::AnchorExpr(KernelBuilder& kb, std::vector<ExprNode>& prog,
                                        const IndexMap& map) {
  const ir::Node& a = g_.nodes[kb.anchor];
  int acc = Push(prog, ExprNode{ExprOp::kAcc});
  kb.nodes.push_back(kb.anchor);
  if (a.op != OpKind::kLayerNorm && a.op != OpKind::kRmsNorm) return acc;
  // weight (and bias) index the row's last dim.
  IndexMap last(1);
  last[0] = map.back();
  absl::StatusOr<int> w = Expr(kb, prog, a.inputs[1], last);
  if (!w.ok()) return w.status();
  int y = Push(prog, ExprNode{ExprOp::kMul, acc, *w});
  if (a.op == OpKind::kRmsNorm) return y;
  absl::StatusOr<int> b = Expr(kb, prog, a.inputs[2], last);
  if (!b.ok()) return b.status();
  return Push(prog, ExprNode{ExprOp::kAdd, y, *b});
}

absl::StatusOr<int> Builder::RowGradOperand(KernelBuilder& kb, const ir::Node& a,
                                            const IndexMap& map) {
  // softmax_grad(y, dy), log_softmax_grad(y, dy): dy. The norms' (x, weight, dy): dy * weight,
  // the weight indexing the row's last dim.
  if (a.op == OpKind::kSoftmaxGrad || a.op == OpKind::kLogSoftmaxGrad) {
    return Expr(kb, kb.kernel.input, a.inputs[1], map);
  }
  absl::StatusOr<int> dy = Expr(kb, kb.kernel.input, a.inputs[2], map);
  if (!dy.ok()) return dy.status();
  IndexMap last(1);
  last[0] = map.back();
  absl::StatusOr<int> w = Expr(kb, kb.kernel.input, a.inputs[1], last);
  if (!w.ok()) return w.status();
  return Push(kb.kernel.input, ExprNode{ExprOp::kMul, *dy, *w});
}

absl::StatusOr<int> Builder::Expr(KernelBuilder& kb, std::vector<ExprNode>& prog, int node,
                                  IndexMap map) {
  // Views and casts forward to their input: followed in this loop, so a chain of them of any
  // length adds no recursion. The recursion below follows the operands of inlined ops only,
  // which the fusion cap bounds.
  for (;;) {
    const ir::Node& n = g_.nodes[node];
    if (node == kb.anchor) return AnchorExpr(kb, prog, map);
    const NodeRole role = groups_.role[node];
    if (role == NodeRole::kConstant) {
      ExprNode c;
      c.op = ExprOp::kConst;
      c.dtype = n.dtype;
      if (n.dtype == ir::DType::kI32) {
        c.ivalue = static_cast<int32_t>(static_cast<int64_t>(n.attrs.scalar));
      } else {
        c.value = static_cast<float>(n.attrs.scalar);
      }
      return Push(prog, c);
    }
    if (node_buffer_[node] >= 0 || copies_.count(node) || role == NodeRole::kInput) {
      return Load(kb, prog, ResolveView(node), map);
    }
    if (role == NodeRole::kView) {
      // Views of a value in memory compose into one access (resolved once per view).
      if (n.op == OpKind::kReshape || Addressable(view_base_[node])) {
        return Load(kb, prog, ResolveView(node), map);
      }
      // Views of a value computed inline: their index maps, down to it.
      const ir::Node& in = g_.nodes[n.inputs[0]];
      IndexMap m(in.shape.size());
      if (n.op == OpKind::kTranspose) {
        for (size_t i = 0; i < n.shape.size(); ++i) m[n.attrs.ints[i]] = map[i];
      } else {  // kSlice
        m = map;
        DimMap& d = m[n.attrs.axis];
        d.scale = d.scale * SymExpr(n.attrs.step);
        d.offset = d.offset * SymExpr(n.attrs.step) + slice_start_[node];
      }
      map = std::move(m);
      node = n.inputs[0];
      continue;
    }
    if (n.op == OpKind::kCast && g_.nodes[n.inputs[0]].dtype == n.dtype) {  // an identity
      node = n.inputs[0];
      continue;
    }
    if (n.op == OpKind::kBroadcastTo) {  // the input read through stride-0 dims
      map = BroadcastMap(g_.nodes[n.inputs[0]].shape, n.shape, map);
      node = n.inputs[0];
      continue;
    }
    break;
  }
  const ir::Node& n = g_.nodes[node];
  if (n.op == OpKind::kIota || n.op == OpKind::kOneHot) return IndexingExpr(kb, prog, node, map);
  if (n.op == OpKind::kGather) return GatherExpr(kb, prog, node, map);
  std::optional<ExprOp> op = ops::ElementwiseExprOp(n.op);
  if (!op.has_value()) {
    // An anchor or concat of another group that has no buffer yet cannot happen in
    // topological order; report rather than assert, naming the node.
    return absl::InternalError(absl::StrCat("lowering: node %", node, " (", ir::OpName(n.op),
                                            ") has no buffer when its consumer is built"));
  }
  // A node the expression reaches twice (an epilogue value and the op beside it) is named once.
  if (std::find(kb.nodes.begin(), kb.nodes.end(), node) == kb.nodes.end()) {
    kb.op_names.emplace_back(ir::OpName(n.op));
  }
  kb.nodes.push_back(node);
  ExprNode e;
  e.op = *op;
  e.dtype = n.dtype;
  int* operands[3] = {&e.a, &e.b, &e.c};
  for (size_t i = 0; i < n.inputs.size() && i < 3; ++i) {
    absl::StatusOr<int> v =
        Expr(kb, prog, n.inputs[i], BroadcastMap(g_.nodes[n.inputs[i]].shape, n.shape, map));
    if (!v.ok()) return v.status();
    *operands[i] = *v;
  }
  const int value = Push(prog, e);
  // A Function output its consumer computes: this kernel stores it too (once), at the same
  // point (its shape is the kernel's domain).
  if (groups_.role[node] == NodeRole::kStoredInline &&
      std::find(kb.stored.begin(), kb.stored.end(), node) == kb.stored.end()) {
    kb.stored.push_back(node);
    Store(kb, value, ContiguousView(output_buffer_[node], n.shape), map);
  }
  // An epilogue value later kernels read too: stored into a buffer of its own, which they
  // read once this kernel is built (BuildGroup sets node_buffer_).
  if (static_cast<size_t>(node) < groups_.stored.size() && groups_.stored[node] &&
      std::find(kb.stored.begin(), kb.stored.end(), node) == kb.stored.end()) {
    kb.stored.push_back(node);
    const int buffer = NewBuffer(ir::BufferKind::kTemp, 0, n.shape, Label(node), node);
    kb.stored_buffers.emplace_back(node, buffer);
    Store(kb, value, ContiguousView(buffer, n.shape), map);
  }
  return value;
}

void Builder::Finish(KernelBuilder kb, const std::string& kind) {
  // Named by the dtype of what it stores: "i32_elementwise_iota".
  const ir::Kernel& k = kb.kernel;
  const ir::DType dtype = k.stores.empty() ? ir::DType::kF32 : k.accesses[k.stores[0].access].dtype;
  std::string name = std::string(ir::DTypeName(dtype)) + "_" + kind;
  for (size_t i = 0; i < kb.op_names.size() && i < 4; ++i) name += "_" + kb.op_names[i];
  kb.kernel.name = name;
  kb.kernel.num_buffers = static_cast<int>(kb.slot_buffer.size());
  ir::KernelCall call;
  call.kernel = std::move(kb.kernel);
  call.buffers = std::move(kb.slot_buffer);
  std::sort(kb.nodes.begin(), kb.nodes.end());
  kb.nodes.erase(std::unique(kb.nodes.begin(), kb.nodes.end()), kb.nodes.end());
  call.nodes = std::move(kb.nodes);
  tiles_.calls.push_back(std::move(call));
}

absl::Status Builder::BuildElementwise(int node, const View& out, const std::string& kind) {
  const ir::Node& n = g_.nodes[node];
  KernelBuilder kb;
  kb.kernel.kind = ir::KernelKind::kElementwise;
  kb.kernel.domain = n.shape;
  IndexMap id = Identity(n.shape.size());
  absl::StatusOr<int> v = Expr(kb, kb.kernel.output, node, id);
  if (!v.ok()) return v.status();
  Store(kb, *v, out, id);
  Finish(std::move(kb), kind);
  return absl::OkStatus();
}

std::optional<View> Builder::MergedStoreView(int root) {
  const ir::Node& mm = g_.nodes[root];
  if (g_.nodes[groups_.anchor[root]].op != OpKind::kMatMul ||
      std::find(g_.outputs.begin(), g_.outputs.end(), root) != g_.outputs.end()) {
    return std::nullopt;
  }
  const std::vector<int>& users = consumers_[root];
  if (users.size() != 1 || g_.nodes[users[0]].op != OpKind::kTranspose ||
      groups_.role[users[0]] != NodeRole::kView) {
    return std::nullopt;
  }
  const ir::Node& t = g_.nodes[users[0]];
  const std::vector<int>& next = consumers_[users[0]];
  if (next.size() != 1 || g_.nodes[next[0]].op != OpKind::kReshape ||
      groups_.role[next[0]] != NodeRole::kView) {
    return std::nullopt;
  }
  // A reshape that the transposed contiguous result allows is a view already.
  const std::vector<SymExpr> transposed =
      TransposedStrides(ir::ContiguousStrides(mm.shape), t.attrs.ints);
  if (ReshapeStrides(t.shape, transposed, g_.nodes[next[0]].shape)) return std::nullopt;
  // Stored so that the transpose reads contiguous values: the result's dim t.attrs.ints[i]
  // takes the stride of the transpose's dim i.
  const std::vector<SymExpr> merged = ir::ContiguousStrides(t.shape);
  View v{NewBuffer(ir::BufferKind::kTemp, 0, t.shape, Label(users[0]), users[0]), SymExpr(0),
         std::vector<SymExpr>(t.shape.size())};
  for (size_t i = 0; i < merged.size(); ++i) v.strides[t.attrs.ints[i]] = merged[i];
  return v;
}

absl::Status Builder::BuildGroup(int anchor, int root, const View& out) {
  const ir::Node& a = g_.nodes[anchor];
  const ir::Node& r = g_.nodes[root];
  KernelBuilder kb;
  kb.anchor = anchor;
  ir::Kernel& k = kb.kernel;
  std::string kind;
  if (a.op == OpKind::kMatMul) {
    kind = "matmul";
    k.kind = ir::KernelKind::kMatMul;
    k.domain = a.shape;
    const size_t rank = a.shape.size();
    const Shape& as = g_.nodes[a.inputs[0]].shape;
    const Shape& bs = g_.nodes[a.inputs[1]].shape;
    View va = ResolveView(a.inputs[0]);
    View vb = ResolveView(a.inputs[1]);
    // Logical (untransposed) strides of the last two dims: A [M, K], B [K, N].
    auto last_two = [](const View& v, bool transposed) {
      size_t r = v.strides.size();
      return transposed ? std::pair{v.strides[r - 1], v.strides[r - 2]}
                        : std::pair{v.strides[r - 2], v.strides[r - 1]};
    };
    auto [a_m, a_k] = last_two(va, a.attrs.transpose_a);
    auto [b_k, b_n] = last_two(vb, a.attrs.transpose_b);
    // An operand copied to contiguous rows of its logical (untransposed) shape.
    auto copy_to_rows = [&](const View& v, Shape logical, bool transposed, int input,
                            const char* what) {
      std::vector<SymExpr> strides = v.strides;
      if (transposed) {
        std::swap(logical[logical.size() - 1], logical[logical.size() - 2]);
        std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
      }
      const int packed =
          CopyToBuffer(View{v.buffer, v.offset, strides}, logical, Label(input) + what, -1);
      return ContiguousView(packed, logical);
    };
    if (b_n != SymExpr(1) && b_k != SymExpr(1)) {
      // Codegen streams B along N (rows of [K, N]) or along K (rows of [N, K], the dot-product
      // form of x·Wᵀ and q·kᵀ); anything else is copied to rows of [K, N] first.
      vb = copy_to_rows(vb, bs, a.attrs.transpose_b, a.inputs[1], " (B rows for matmul)");
      b_k = vb.strides[vb.strides.size() - 2];
      b_n = 1;
    }
    if (a_k != SymExpr(1) && CopyARows(a.shape.back())) {
      // A read across K (a weight gradient's dyᵀ): each K step of a micro-tile touches another
      // line, at a stride that is often a power of two, so the lines of one micro-tile share a
      // few cache sets and miss where they should hit. Rows of [M, K] are read once, in order.
      va = copy_to_rows(va, as, a.attrs.transpose_a, a.inputs[0], " (A rows for matmul)");
      a_m = va.strides[va.strides.size() - 2];
      a_k = 1;
    }
    k.k = a.attrs.transpose_a ? as[as.size() - 2] : as.back();
    // Extended domain [batch..., M, N, K].
    auto operand_access = [&](const View& v, const Shape& shape, SymExpr m_or_0, SymExpr n_or_0,
                              SymExpr k_stride) {
      std::vector<SymExpr> strides(rank + 1, SymExpr(0));
      const size_t batch = rank - 2, obatch = shape.size() - 2;
      for (size_t d = 0; d < obatch; ++d) {
        const size_t out_d = batch - obatch + d;
        if (!(IsOne(shape[d]) && !IsOne(a.shape[out_d]))) strides[out_d] = v.strides[d];
      }
      strides[rank - 2] = m_or_0;
      strides[rank - 1] = n_or_0;
      strides[rank] = k_stride;
      return kb.AddAccess(v.buffer, v.offset, std::move(strides));
    };
    k.a = operand_access(va, as, a_m, 0, a_k);
    k.b = operand_access(vb, bs, 0, b_n, b_k);
  }
  const ir::Node& x = g_.nodes[a.inputs[0]];
  IndexMap out_map = Identity(r.shape.size());
  if (a.op != OpKind::kMatMul) {
    k.domain = x.shape;
    IndexMap id = Identity(x.shape.size());
    absl::StatusOr<int> in = Expr(kb, k.input, a.inputs[0], id);
    if (!in.ok()) return in.status();
    k.input_value = *in;
    if (std::optional<ir::ReduceKind> rk = ops::ReduceKindOf(a.op)) {
      kind = "reduce";
      k.kind = ir::KernelKind::kReduce;
      k.reduce = *rk;
      k.axis = static_cast<int>(a.attrs.axis < 0 ? a.attrs.axis + x.shape.size() : a.attrs.axis);
      // The result indexes the domain with the reduced axis fixed at 0.
      out_map.clear();
      for (int d = 0; d < static_cast<int>(x.shape.size()); ++d) {
        if (d == k.axis) {
          if (a.attrs.keepdims) out_map.push_back(DimMap{});
          continue;
        }
        DimMap m;
        m.dom = d;
        out_map.push_back(m);
      }
    } else {
      kind = std::string(ir::OpName(a.op));
      k.kind = ir::KernelKind::kRowOp;
      k.row_op = *ops::RowOpKindOf(a.op);
      k.eps = a.attrs.eps;
      if (ir::IsRowGrad(k.row_op)) {
        absl::StatusOr<int> dy = RowGradOperand(kb, a, id);
        if (!dy.ok()) return dy.status();
        k.input_dy = *dy;
      }
    }
  }
  absl::StatusOr<int> v = Expr(kb, k.output, root, out_map);
  if (!v.ok()) return v.status();
  Store(kb, *v, out, out_map);
  // The values computed beside the chain (FusionGroups::beside), each a reader of a node the
  // expression computed: Expr stores them.
  const std::vector<int> computed = kb.nodes;
  for (int node : computed) {
    for (int x : consumers_[node]) {
      if (!groups_.beside[x] || groups_.anchor[x] != anchor ||
          std::find(kb.stored.begin(), kb.stored.end(), x) != kb.stored.end()) {
        continue;
      }
      if (absl::StatusOr<int> b = Expr(kb, k.output, x, out_map); !b.ok()) return b.status();
    }
  }
  const std::vector<std::pair<int, int>> stored = kb.stored_buffers;
  Finish(std::move(kb), kind);
  for (const auto& [node, buffer] : stored) node_buffer_[node] = buffer;
  return absl::OkStatus();
}

// Each input is copied into its window of the result, consecutive inputs together:
//   - a run of inputs of one shape that read one buffer at evenly spaced offsets (the same
//     value repeated, or slices stepping through a tensor) is one kernel over the run's index
//     and the input's dims;
//   - other inputs of one shape share a kernel (one store each), as many as the fusion cap and
//     the kernel's buffer bound allow.
// A concat of thousands of inputs compiles a few kernels, or a few dozen, not thousands.
absl::Status Builder::BuildConcat(int node, int buffer) {
  const ir::Node& n = g_.nodes[node];
  const int64_t axis = n.attrs.axis < 0 ? n.attrs.axis + n.shape.size() : n.attrs.axis;
  const View out = ContiguousView(buffer, n.shape);
  const std::vector<int>& inputs = n.inputs;
  const int count = static_cast<int>(inputs.size());
  // Inputs already computed in their window (PlanConcatWindows) are not copied.
  std::vector<bool> skip(count, false);
  if (auto it = in_window_.find(node); it != in_window_.end()) skip = it->second;
  // The view of each input that is read from memory; the length of the run starting there.
  std::vector<std::optional<View>> views(count);
  for (int j = 0; j < count; ++j) {
    const int in = inputs[j];
    if (skip[j]) continue;
    if (Addressable(in) || (groups_.role[in] == NodeRole::kView && Addressable(view_base_[in]))) {
      views[j] = ResolveView(in);
    }
  }
  auto step = [&](int j) { return views[j + 1]->offset - views[j]->offset; };
  std::vector<int> run(count, 1);
  const bool rank_allows_runs = static_cast<int64_t>(n.shape.size()) < graph::kMaxRank;
  for (int j = count - 2; j >= 0 && rank_allows_runs; --j) {
    const bool continues = views[j] && views[j + 1] && views[j]->buffer == views[j + 1]->buffer &&
                           views[j]->strides == views[j + 1]->strides &&
                           g_.nodes[inputs[j]].shape == g_.nodes[inputs[j + 1]].shape &&
                           (run[j + 1] == 1 || step(j) == step(j + 1));
    if (continues) run[j] = run[j + 1] + 1;
  }
  SymExpr start = 0;
  for (int j = 0; j < count;) {
    const Shape& shape = g_.nodes[inputs[j]].shape;
    if (skip[j]) {
      start = start + shape[axis];
      ++j;
      continue;
    }
    KernelBuilder kb;
    kb.kernel.kind = ir::KernelKind::kElementwise;
    if (run[j] > 1) {
      const View& v = *views[j];
      kb.kernel.domain = shape;
      kb.kernel.domain.insert(kb.kernel.domain.begin(), SymExpr(run[j]));
      std::vector<SymExpr> load_strides = v.strides, store_strides = out.strides;
      load_strides.insert(load_strides.begin(), step(j));
      store_strides.insert(store_strides.begin(), shape[axis] * out.strides[axis]);
      ExprNode load;
      load.op = ExprOp::kLoad;
      load.access =
          kb.AddAccess(v.buffer, v.offset, std::move(load_strides), BufferDType(v.buffer));
      load.dtype = BufferDType(v.buffer);
      ir::Store store;
      store.access = kb.AddAccess(out.buffer, start * out.strides[axis], std::move(store_strides),
                                  BufferDType(out.buffer));
      store.value = Push(kb.kernel.output, load);
      kb.kernel.stores.push_back(store);
      start = start + shape[axis] * SymExpr(run[j]);
      j += run[j];
      Finish(std::move(kb), "concat");
      continue;
    }
    kb.kernel.domain = shape;
    const IndexMap id = Identity(shape.size());
    int cost = 0;
    for (const int first = j; j < count && !skip[j] && (j == first || run[j] == 1); ++j) {
      const int in = inputs[j];
      const int in_cost = groups_.inline_cost[in] + kStoreCost;  // its expression and store
      const bool fits = g_.nodes[in].shape == shape && cost + in_cost <= groups_.max_group_cost &&
                        static_cast<int>(kb.slot_buffer.size()) + groups_.inline_cost[in] <=
                            kMaxKernelBuffers;  // it loads at most its cost in new buffers
      if (j > first && !fits) break;
      View window = out;
      window.offset = start * out.strides[axis];
      absl::StatusOr<int> v = Expr(kb, kb.kernel.output, in, id);
      if (!v.ok()) return v.status();
      Store(kb, *v, window, id);
      start = start + shape[axis];
      cost += in_cost;
    }
    Finish(std::move(kb), "concat");
  }
  return absl::OkStatus();
}

View Builder::FlatView(int node, const Shape& shape) {
  View v = ResolveView(node);
  const Shape& own = g_.nodes[node].shape;
  if (std::optional<std::vector<SymExpr>> strides = ReshapeStrides(own, v.strides, shape)) {
    v.strides = *std::move(strides);
    return v;
  }
  int copy = CopyToBuffer(v, own, Label(node) + " (contiguous for scatter_add)", node);
  return ContiguousView(copy, shape);
}

absl::Status Builder::BuildScatterAdd(int node, int buffer) {
  const ir::Node& n = g_.nodes[node];
  const Shape& like = n.shape;
  const size_t axis = static_cast<size_t>(
      n.attrs.axis < 0 ? n.attrs.axis + static_cast<int64_t>(like.size()) : n.attrs.axis);
  auto product = [](const Shape& shape, size_t begin, size_t end) {
    SymExpr p(1);
    for (size_t i = begin; i < end; ++i) p = p * shape[i];
    return p;
  };
  const Shape& indices = g_.nodes[n.inputs[2]].shape;
  const SymExpr p = product(like, 0, axis), rows = like[axis],
                m = product(indices, 0, indices.size()), q = product(like, axis + 1, like.size());
  const View updates = FlatView(n.inputs[1], {p, m, q});
  const View index = FlatView(n.inputs[2], {m});
  KernelBuilder kb;
  kb.kernel.kind = ir::KernelKind::kScatterAdd;
  kb.kernel.domain = {p, rows, m, q};
  kb.nodes.push_back(node);
  const SymExpr zero(0);
  kb.kernel.a = kb.AddAccess(updates.buffer, updates.offset,
                             {updates.strides[0], zero, updates.strides[1], updates.strides[2]});
  kb.kernel.b = kb.AddAccess(index.buffer, index.offset, {zero, zero, index.strides[0], zero},
                             ir::DType::kI32);
  ir::Store store;
  store.access = kb.AddAccess(buffer, zero, {rows * q, q, zero, SymExpr(1)});
  store.value = Push(kb.kernel.output, ExprNode{ExprOp::kAcc});
  kb.kernel.stores.push_back(store);
  Finish(std::move(kb), "scatter_add");
  return absl::OkStatus();
}

void Builder::PlanConcatWindows() {
  auto is_output = [&](int node) {
    return std::find(g_.outputs.begin(), g_.outputs.end(), node) != g_.outputs.end();
  };
  auto only_use = [&](int node, int user) {
    return consumers_[node].size() == 1 && consumers_[node][0] == user && !is_output(node);
  };
  for (int c = 0; c < static_cast<int>(g_.nodes.size()); ++c) {
    const ir::Node& n = g_.nodes[c];
    if (n.op != OpKind::kConcat || groups_.role[c] != NodeRole::kRoot) continue;
    const int64_t axis = n.attrs.axis < 0 ? n.attrs.axis + n.shape.size() : n.attrs.axis;
    const std::vector<SymExpr> strides = ir::ContiguousStrides(n.shape);
    std::vector<bool> in_window(n.inputs.size(), false);
    SymExpr start = 0;
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      const int x = n.inputs[j];
      const SymExpr length = g_.nodes[x].shape[axis];
      // Down the reshapes and transposes that are each the only use of their input, to the
      // node that computes the values, with the window's strides in its shape.
      int r = x;
      std::optional<std::vector<SymExpr>> view_strides = strides;
      bool only = only_use(x, c);
      while (only && view_strides.has_value() && groups_.role[r] == NodeRole::kView &&
             (g_.nodes[r].op == OpKind::kReshape || g_.nodes[r].op == OpKind::kTranspose)) {
        const ir::Node& v = g_.nodes[r];
        const int in = v.inputs[0];
        only = only_use(in, r);
        if (v.op == OpKind::kReshape) {
          view_strides = ReshapeStrides(v.shape, *view_strides, g_.nodes[in].shape);
        } else {
          // The transpose's dim i is its input's dim ints[i].
          std::vector<SymExpr> t(view_strides->size());
          for (size_t d = 0; d < t.size(); ++d) t[v.attrs.ints[d]] = (*view_strides)[d];
          view_strides = std::move(t);
        }
        r = in;
      }
      const OpKind op = g_.nodes[r].op;
      const bool computed = groups_.role[r] == NodeRole::kRoot && op != OpKind::kConcat &&
                            op != OpKind::kScatterAdd && !windows_.count(r);
      if (computed && only && view_strides.has_value() && g_.nodes[r].dtype == n.dtype) {
        windows_[r] = Window{c, View{-1, start * strides[axis], *std::move(view_strides)}};
        in_window[j] = true;
      }
      start = start + length;
    }
    in_window_[c] = std::move(in_window);
  }
}

int Builder::ConcatBuffer(int node) {
  if (auto it = concat_buffer_.find(node); it != concat_buffer_.end()) return it->second;
  const int buffer = output_buffer_[node] >= 0 ? output_buffer_[node]
                                               : NewBuffer(ir::BufferKind::kTemp, 0,
                                                           g_.nodes[node].shape, Label(node), node);
  concat_buffer_[node] = buffer;
  return buffer;
}

absl::StatusOr<ir::TileGraph> Builder::Build() {
  const int n = static_cast<int>(g_.nodes.size());
  slice_start_.assign(n, SymExpr(0));
  for (int i = 0; i < n; ++i) {
    const ir::Node& node = g_.nodes[i];
    if (node.op != OpKind::kSlice) continue;
    const ir::Attrs& a = node.attrs;
    std::optional<SymExpr> start = ops::SymbolicSliceStart(g_.nodes[node.inputs[0]].shape[a.axis],
                                                           a.start, a.end, a.step, g_.symbols);
    if (!start.has_value()) {
      return absl::InternalError(
          absl::StrCat("lowering: slice node %", i, " has no symbol for its start"));
    }
    slice_start_[i] = *std::move(start);
  }
  for (int i = 0; i < n; ++i) {
    if (g_.nodes[i].op == OpKind::kInput) {
      node_buffer_[i] = NewBuffer(ir::BufferKind::kInput, static_cast<int>(g_.nodes[i].attrs.index),
                                  g_.nodes[i].shape, Label(i), i);
    }
  }
  // Roots that are outputs are computed straight into the caller's output buffer.
  output_buffer_.assign(n, -1);
  std::vector<int>& output_buffer = output_buffer_;
  std::vector<bool> output_done(g_.outputs.size(), false);
  for (size_t o = 0; o < g_.outputs.size(); ++o) {
    int node = g_.outputs[o];
    const NodeRole role = groups_.role[node];
    if ((role == NodeRole::kRoot || role == NodeRole::kStoredInline) && output_buffer[node] < 0) {
      output_buffer[node] = NewBuffer(ir::BufferKind::kOutput, static_cast<int>(o),
                                      g_.nodes[node].shape, Label(node), node);
      output_done[o] = true;
    }
  }
  PlanConcatWindows();
  for (int i = 0; i < n; ++i) {
    if (groups_.role[i] != NodeRole::kRoot) continue;
    if (auto w = windows_.find(i); w != windows_.end()) {
      View window = w->second.view;
      window.buffer = ConcatBuffer(w->second.concat);
      absl::Status s = groups_.anchor[i] >= 0 ? BuildGroup(groups_.anchor[i], i, window)
                                              : BuildElementwise(i, window, "elementwise");
      if (!s.ok()) return s;
      views_[i] = window;
      continue;
    }
    if (output_buffer[i] < 0 && groups_.anchor[i] >= 0) {
      if (std::optional<View> merged = MergedStoreView(i)) {
        if (absl::Status s = BuildGroup(groups_.anchor[i], i, *merged); !s.ok()) return s;
        views_[i] = *merged;
        continue;
      }
    }
    int buffer = g_.nodes[i].op == OpKind::kConcat ? ConcatBuffer(i)
                 : output_buffer[i] >= 0
                     ? output_buffer[i]
                     : NewBuffer(ir::BufferKind::kTemp, 0, g_.nodes[i].shape, Label(i), i);
    absl::Status s;
    if (groups_.anchor[i] >= 0) {
      s = BuildGroup(groups_.anchor[i], i, ContiguousView(buffer, g_.nodes[i].shape));
    } else if (g_.nodes[i].op == OpKind::kConcat) {
      s = BuildConcat(i, buffer);
    } else if (g_.nodes[i].op == OpKind::kScatterAdd) {
      s = BuildScatterAdd(i, buffer);
    } else {
      s = BuildElementwise(i, ContiguousView(buffer, g_.nodes[i].shape), "elementwise");
    }
    if (!s.ok()) return s;
    node_buffer_[i] = buffer;
  }
  for (size_t o = 0; o < g_.outputs.size(); ++o) {
    if (output_done[o]) continue;
    int node = g_.outputs[o];
    const ir::Node& out = g_.nodes[node];
    int buffer =
        NewBuffer(ir::BufferKind::kOutput, static_cast<int>(o), out.shape, Label(node), node);
    if (absl::Status s = BuildElementwise(node, ContiguousView(buffer, out.shape), "output_copy");
        !s.ok()) {
      return s;
    }
  }
  return std::move(tiles_);
}

}  // namespace

absl::StatusOr<ir::TileGraph> BuildTileGraph(const ir::Graph& graph, const FusionGroups& groups) {
  return Builder(graph, groups).Build();
}

}  // namespace pto::jit
