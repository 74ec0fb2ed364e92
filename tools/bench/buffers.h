// Aligned float buffers for the bench's operands, and their rotated copies.
#ifndef PTO_TOOLS_BENCH_BUFFERS_H_
#define PTO_TOOLS_BENCH_BUFFERS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "tools/bench/bench_case.h"

namespace pto::bench {

// A 64-byte aligned array of floats (never initialized by the constructor).
class AlignedFloats {
 public:
  AlignedFloats() = default;
  explicit AlignedFloats(int64_t count);
  float* data() const { return data_.get(); }
  int64_t size() const { return size_; }

 private:
  struct Free {
    void operator()(float* p) const;
  };
  std::unique_ptr<float[], Free> data_;
  int64_t size_ = 0;
};

// Fills `out` with values uniform in [lo, hi) from a fixed generator seeded with `seed`.
void FillUniform(float* out, int64_t count, float lo, float hi, uint64_t seed);

// `copies` byte-identical copies of a case's operands (inputs random, outputs zeroed).
class OperandSets {
 public:
  OperandSets(const CaseSpec& spec, int copies);
  const std::vector<IoSet>& sets() const { return sets_; }
  // Zeroes copy 0's outputs, calls run(0) and returns copy 0's outputs (so a backend that
  // writes nothing cannot pass on another's results).
  std::vector<std::vector<float>> OutputsOf(const std::function<void(int set)>& run) const;

 private:
  std::vector<AlignedFloats> storage_;
  std::vector<IoSet> sets_;
  std::vector<int64_t> output_sizes_;
};

// Element count of a shape.
int64_t Elements(const std::vector<int64_t>& shape);
// Bytes of one copy of a case's operands.
int64_t FootprintBytes(const CaseSpec& spec);
// Copies needed so that the rotated operands exceed `cache_bytes` (at least 1, at most
// `max_copies`).
int CopiesFor(const CaseSpec& spec, int64_t cache_bytes, int max_copies);

}  // namespace pto::bench

#endif  // PTO_TOOLS_BENCH_BUFFERS_H_
