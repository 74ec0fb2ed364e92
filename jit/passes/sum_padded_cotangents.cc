#include "jit/passes/sum_padded_cotangents.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace pto::jit {
namespace {

using ir::OpKind;

struct Piece {
  int64_t start = 0, end = 0;
  int node = -1;  // -1: zeros
};

bool IsZeros(const ir::Graph& g, int id) {
  const ir::Node& n = g.nodes[id];
  if (n.op != OpKind::kBroadcastTo) return false;
  const ir::Node& in = g.nodes[n.inputs[0]];
  return in.op == OpKind::kConstant && in.attrs.scalar == 0.0;
}

// The pieces of concat `id` along `axis`, or nothing when a size is symbolic.
std::optional<std::vector<Piece>> Pieces(const ir::Graph& g, int id, int64_t axis) {
  std::vector<Piece> pieces;
  int64_t at = 0;
  for (int in : g.nodes[id].inputs) {
    const std::optional<int64_t> size = g.nodes[in].shape[axis].AsConstant();
    if (!size.has_value()) return std::nullopt;
    pieces.push_back({at, at + *size, IsZeros(g, in) ? -1 : in});
    at += *size;
  }
  return pieces;
}

// The piece of `pieces` that holds position `at`.
const Piece& At(const std::vector<Piece>& pieces, int64_t at) {
  return *std::find_if(pieces.begin(), pieces.end(), [at](const Piece& p) { return at < p.end; });
}

}  // namespace

int SumPaddedCotangents(ops::GraphBuilder& b, int x, int y) {
  const ir::Graph& g = b.graph();
  const ir::Node& nx = g.nodes[x];
  const ir::Node& ny = g.nodes[y];
  if (nx.op != OpKind::kConcat || ny.op != OpKind::kConcat || nx.shape != ny.shape ||
      nx.dtype != ir::DType::kF32 || ny.dtype != ir::DType::kF32) {
    return -1;
  }
  const int64_t rank = static_cast<int64_t>(nx.shape.size());
  const int64_t axis = nx.attrs.axis < 0 ? nx.attrs.axis + rank : nx.attrs.axis;
  const int64_t y_axis = ny.attrs.axis < 0 ? ny.attrs.axis + rank : ny.attrs.axis;
  if (axis != y_axis) return -1;
  const std::optional<std::vector<Piece>> px = Pieces(g, x, axis), py = Pieces(g, y, axis);
  if (!px.has_value() || !py.has_value()) return -1;
  std::vector<int64_t> bounds;
  for (const std::vector<Piece>* side : {&*px, &*py}) {
    for (const Piece& p : *side) bounds.push_back(p.end);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  // Runs of the result: each a nonzero piece of one side (whole: the other side is zeros all
  // along it) or zeros.
  std::vector<Piece> runs;
  int64_t start = 0;
  for (int64_t end : bounds) {
    if (end == start) continue;
    const Piece& a = At(*px, start);
    const Piece& c = At(*py, start);
    if (a.node >= 0 && c.node >= 0) return -1;  // both nonzero here: a real sum
    const Piece& chosen = a.node >= 0 ? a : c;
    if (!runs.empty() && runs.back().node == chosen.node) {
      runs.back().end = end;
    } else {
      runs.push_back({start, end, chosen.node});
    }
    start = end;
  }
  std::vector<int> parts;
  for (const Piece& run : runs) {
    if (run.node >= 0) {
      parts.push_back(run.node);
      continue;
    }
    ir::Shape shape = nx.shape;
    shape[axis] = ir::SymExpr(run.end - run.start);
    parts.push_back(b.Filled(0, shape));
  }
  if (parts.size() == 1) return parts[0];
  return b.Concat(parts, axis);
}

}  // namespace pto::jit
