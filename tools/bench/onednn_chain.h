// A chain of oneDNN primitives over rotated operand copies, run on one stream with a fixed
// OpenMP thread count. Tracks the lifetimes of its intermediate buffers to report the chain's
// peak intermediate memory. Only built with oneDNN.
#ifndef PTO_TOOLS_BENCH_ONEDNN_CHAIN_H_
#define PTO_TOOLS_BENCH_ONEDNN_CHAIN_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "dnnl.hpp"
#include "tools/bench/bench_case.h"
#include "tools/bench/buffers.h"

namespace pto::bench {

using Args = std::unordered_map<int, dnnl::memory>;
using Dims = dnnl::memory::dims;

dnnl::engine& CpuEngine();
// Runs `build`, turning a oneDNN exception into a Status.
absl::StatusOr<Prepared> GuardOnednn(const std::function<Prepared()>& build);
// A plain row-major f32 descriptor, or one with explicit strides.
dnnl::memory::desc Plain(const Dims& dims);
dnnl::memory::desc Strided(const Dims& dims, const Dims& strides);

class Chain {
 public:
  // Sets the OpenMP thread count (primitives created afterwards size themselves by it).
  Chain(const std::vector<IoSet>& sets, int threads);

  int num_sets() const { return static_cast<int>(sets_.size()); }
  // Memory over input i / output i of set s, with descriptor md, at an element offset.
  dnnl::memory In(int s, int i, const dnnl::memory::desc& md, int64_t offset = 0) const;
  dnnl::memory Out(int s, int i, const dnnl::memory::desc& md) const;
  // An intermediate buffer (shared by all sets) and a memory over it.
  dnnl::memory Scratch(const dnnl::memory::desc& md);
  // A constant input (a weight): input i of set 0 reordered once (untimed) into `want` (a
  // layout oneDNN chose), that one copy used by every set (pto keeps one snapshot of its
  // constant inputs too, so weights are not rotated for either).
  std::vector<dnnl::memory> Reordered(int i, const dnnl::memory::desc& have,
                                      const dnnl::memory::desc& want);

  // Appends a primitive with its arguments for each set.
  void Add(dnnl::primitive primitive, const std::function<Args(int s)>& args);
  Prepared Finish();

 private:
  struct Step {
    dnnl::primitive primitive;
    std::vector<Args> args;  // per set
  };
  struct Lifetime {
    int64_t bytes = 0;
    int first = -1, last = -1;
  };
  std::vector<IoSet> sets_;
  int threads_;
  std::vector<Step> steps_;
  std::vector<std::shared_ptr<AlignedFloats>> scratch_;
  std::map<char*, Lifetime> lifetimes_;  // by buffer start
  std::vector<dnnl::memory> kept_;       // reordered weights
};

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_ONEDNN_CHAIN_H_
