#include "tools/bench/buffers.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace pto::bench {

AlignedFloats::AlignedFloats(int64_t count) : size_(count) {
  const size_t bytes = (static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(float) + 63) &
                       ~static_cast<size_t>(63);
  data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

void AlignedFloats::Free::operator()(float* p) const { std::free(p); }

void FillUniform(float* out, int64_t count, float lo, float hi, uint64_t seed) {
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
  const float scale = (hi - lo) / 16777216.0f;
  for (int64_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    out[i] = lo + static_cast<float>(state >> 40) * scale;
  }
}

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t FootprintBytes(const CaseSpec& spec) {
  int64_t n = 0;
  for (const InputSpec& in : spec.inputs) n += Elements(in.shape);
  for (const auto& out : spec.outputs) n += Elements(out);
  return n * static_cast<int64_t>(sizeof(float));
}

int CopiesFor(const CaseSpec& spec, int64_t cache_bytes, int max_copies) {
  const int64_t one = std::max<int64_t>(FootprintBytes(spec), 1);
  const int64_t copies = (cache_bytes + one - 1) / one;
  return static_cast<int>(std::clamp<int64_t>(copies, 1, max_copies));
}

OperandSets::OperandSets(const CaseSpec& spec, int copies) {
  std::vector<AlignedFloats> first_inputs;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const InputSpec& in = spec.inputs[i];
    AlignedFloats a(Elements(in.shape));
    FillUniform(a.data(), a.size(), in.lo, in.hi, 1000 + i);
    first_inputs.push_back(std::move(a));
  }
  for (const auto& out : spec.outputs) output_sizes_.push_back(Elements(out));
  for (int c = 0; c < copies; ++c) {
    IoSet set;
    for (const AlignedFloats& src : first_inputs) {
      AlignedFloats a(src.size());
      std::memcpy(a.data(), src.data(), src.size() * sizeof(float));
      set.inputs.push_back(a.data());
      storage_.push_back(std::move(a));
    }
    for (int64_t n : output_sizes_) {
      AlignedFloats a(n);
      std::memset(a.data(), 0, n * sizeof(float));
      set.outputs.push_back(a.data());
      storage_.push_back(std::move(a));
    }
    sets_.push_back(std::move(set));
  }
}

std::vector<std::vector<float>> OperandSets::OutputsOf(
    const std::function<void(int set)>& run) const {
  for (size_t i = 0; i < output_sizes_.size(); ++i) {
    std::memset(sets_[0].outputs[i], 0, output_sizes_[i] * sizeof(float));
  }
  run(0);
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < output_sizes_.size(); ++i) {
    const float* p = sets_[0].outputs[i];
    out.emplace_back(p, p + output_sizes_[i]);
  }
  return out;
}

}  // namespace pto::bench
