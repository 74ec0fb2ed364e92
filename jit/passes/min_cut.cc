#include "jit/passes/min_cut.h"

#include <algorithm>
#include <queue>

namespace pto::jit {

FlowNetwork::FlowNetwork(int vertices) : out_(vertices) {}

void FlowNetwork::AddEdge(int from, int to, int64_t capacity) {
  out_[from].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({to, capacity});
  out_[to].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({from, 0});
}

bool FlowNetwork::Levels(int source, int sink) {
  level_.assign(out_.size(), -1);
  level_[source] = 0;
  std::queue<int> queue;
  queue.push(source);
  while (!queue.empty()) {
    const int v = queue.front();
    queue.pop();
    for (int e : out_[v]) {
      if (edges_[e].capacity > 0 && level_[edges_[e].to] < 0) {
        level_[edges_[e].to] = level_[v] + 1;
        queue.push(edges_[e].to);
      }
    }
  }
  return level_[sink] >= 0;
}

int64_t FlowNetwork::Push(int v, int sink, int64_t limit) {
  if (v == sink) return limit;
  for (int& i = next_[v]; i < static_cast<int>(out_[v].size()); ++i) {
    Edge& edge = edges_[out_[v][i]];
    if (edge.capacity <= 0 || level_[edge.to] != level_[v] + 1) continue;
    const int64_t pushed = Push(edge.to, sink, std::min(limit, edge.capacity));
    if (pushed > 0) {
      edge.capacity -= pushed;
      edges_[out_[v][i] ^ 1].capacity += pushed;
      return pushed;
    }
  }
  return 0;
}

std::vector<bool> FlowNetwork::MinCut(int source, int sink, int64_t* cut_capacity) {
  int64_t flow = 0;
  while (Levels(source, sink)) {
    next_.assign(out_.size(), 0);
    while (const int64_t pushed = Push(source, sink, kUncuttable)) flow += pushed;
  }
  if (cut_capacity != nullptr) *cut_capacity = flow;
  // Levels' last search, which no longer reached the sink, marked the source's side.
  std::vector<bool> side(out_.size());
  for (size_t v = 0; v < out_.size(); ++v) side[v] = level_[v] >= 0;
  return side;
}

}  // namespace pto::jit
