// A minimum s-t cut of a directed graph with integer capacities, found as the residual
// graph's reachable set after a maximum flow (Dinic's algorithm).
#ifndef PTO_JIT_PASSES_MIN_CUT_H_
#define PTO_JIT_PASSES_MIN_CUT_H_

#include <cstdint>
#include <vector>

namespace pto::jit {

// Large enough never to be cut, small enough that sums of a few never overflow.
inline constexpr int64_t kUncuttable = int64_t{1} << 60;

class FlowNetwork {
 public:
  explicit FlowNetwork(int vertices);

  void AddEdge(int from, int to, int64_t capacity);

  // The cut of least total capacity separating `source` from `sink`: per vertex, whether it
  // lies on the source's side. Its capacity is `*cut_capacity` when given.
  std::vector<bool> MinCut(int source, int sink, int64_t* cut_capacity = nullptr);

 private:
  struct Edge {
    int to;
    int64_t capacity;  // residual
  };
  bool Levels(int source, int sink);
  // Pushes flow along one path of the level graph; 0 when none is left.
  int64_t Augment(int source, int sink);

  std::vector<Edge> edges_;            // edge e's reverse is e ^ 1
  std::vector<std::vector<int>> out_;  // vertex -> its edges
  std::vector<int> level_, next_;
};

}  // namespace pto::jit

#endif  // PTO_JIT_PASSES_MIN_CUT_H_
