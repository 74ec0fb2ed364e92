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

int64_t FlowNetwork::Augment(int source, int sink) {
  // A walk from the source along the level graph, each vertex resuming at its next untried
  // edge; a dead end is left and its edge never tried again this phase. Iterative, so a path
  // as long as the graph takes no stack.
  std::vector<int> path;  // edges from the source
  int v = source;
  while (v != sink) {
    const int n = static_cast<int>(out_[v].size());
    int& i = next_[v];
    while (i < n &&
           (edges_[out_[v][i]].capacity <= 0 || level_[edges_[out_[v][i]].to] != level_[v] + 1)) {
      ++i;
    }
    if (i < n) {
      path.push_back(out_[v][i]);
      v = edges_[out_[v][i]].to;
      continue;
    }
    if (path.empty()) return 0;
    v = edges_[path.back() ^ 1].to;  // back to the edge's tail
    path.pop_back();
    ++next_[v];
  }
  int64_t pushed = kUncuttable;
  for (int e : path) pushed = std::min(pushed, edges_[e].capacity);
  for (int e : path) {
    edges_[e].capacity -= pushed;
    edges_[e ^ 1].capacity += pushed;
  }
  return pushed;
}

std::vector<bool> FlowNetwork::MinCut(int source, int sink, int64_t* cut_capacity) {
  int64_t flow = 0;
  while (Levels(source, sink)) {
    next_.assign(out_.size(), 0);
    while (const int64_t pushed = Augment(source, sink)) flow += pushed;
  }
  if (cut_capacity != nullptr) *cut_capacity = flow;
  // Levels' last search, which no longer reached the sink, marked the source's side.
  std::vector<bool> side(out_.size());
  for (size_t v = 0; v < out_.size(); ++v) side[v] = level_[v] >= 0;
  return side;
}

}  // namespace pto::jit
