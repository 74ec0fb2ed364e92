#include "tools/bench/onednn_chain.h"

#include <omp.h>

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pto::bench {

dnnl::engine& CpuEngine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

absl::StatusOr<Prepared> GuardOnednn(const std::function<Prepared()>& build) {
  try {
    return build();
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN: ", e.what()));
  }
}

dnnl::memory::desc Plain(const Dims& dims) {
  Dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

dnnl::memory::desc Strided(const Dims& dims, const Dims& strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

Chain::Chain(const std::vector<IoSet>& sets, int threads) : sets_(sets), threads_(threads) {
  omp_set_num_threads(threads);
}

dnnl::memory Chain::In(int s, int i, const dnnl::memory::desc& md, int64_t offset) const {
  return dnnl::memory(md, CpuEngine(), sets_[s].inputs[i] + offset);
}

dnnl::memory Chain::Out(int s, int i, const dnnl::memory::desc& md) const {
  return dnnl::memory(md, CpuEngine(), sets_[s].outputs[i]);
}

dnnl::memory Chain::Scratch(const dnnl::memory::desc& md) {
  const int64_t bytes = static_cast<int64_t>(md.get_size());
  auto buffer = std::make_shared<AlignedFloats>((bytes + 3) / 4);
  std::fill(buffer->data(), buffer->data() + buffer->size(), 0.0f);
  scratch_.push_back(buffer);
  lifetimes_[reinterpret_cast<char*>(buffer->data())] = Lifetime{bytes, -1, -1};
  return dnnl::memory(md, CpuEngine(), buffer->data());
}

std::vector<dnnl::memory> Chain::Reordered(int i, const dnnl::memory::desc& have,
                                           const dnnl::memory::desc& want) {
  // One copy for every set, as pto keeps one snapshot of a constant input.
  dnnl::memory src = In(0, i, have), dst = src;
  if (want != have) {
    dnnl::stream stream(CpuEngine());
    dst = dnnl::memory(want, CpuEngine());
    dnnl::reorder(src, dst).execute(stream, src, dst);
    stream.wait();
    kept_.push_back(dst);
  }
  return std::vector<dnnl::memory>(num_sets(), dst);
}

void Chain::Add(dnnl::primitive primitive, const std::function<Args(int s)>& args) {
  Step step{std::move(primitive), {}};
  const int index = static_cast<int>(steps_.size());
  for (int s = 0; s < num_sets(); ++s) {
    step.args.push_back(args(s));
    if (s > 0) continue;
    for (auto& [key, memory] : step.args.back()) {
      // The scratch buffer holding this memory's handle (views may start inside a buffer).
      char* handle = static_cast<char*>(memory.get_data_handle());
      auto it = lifetimes_.upper_bound(handle);
      if (it == lifetimes_.begin()) continue;
      --it;
      if (handle >= static_cast<char*>(it->first) + it->second.bytes) continue;
      if (it->second.first < 0) it->second.first = index;
      it->second.last = index;
    }
  }
  steps_.push_back(std::move(step));
}

Prepared Chain::Finish() {
  int64_t peak = 0;
  for (size_t i = 0; i < steps_.size(); ++i) {
    int64_t live = 0;
    for (const auto& [ptr, life] : lifetimes_) {
      if (life.first <= static_cast<int>(i) && static_cast<int>(i) <= life.last) live += life.bytes;
    }
    peak = std::max(peak, live);
  }
  auto steps = std::make_shared<std::vector<Step>>(std::move(steps_));
  auto keep = std::make_shared<std::pair<decltype(scratch_), decltype(kept_)>>(std::move(scratch_),
                                                                               std::move(kept_));
  auto stream = std::make_shared<dnnl::stream>(CpuEngine());
  Prepared prepared;
  prepared.intermediate_bytes = peak;
  prepared.run = [steps, keep, stream, threads = threads_](int set) {
    omp_set_num_threads(threads);
    for (Step& step : *steps) step.primitive.execute(*stream, step.args[set]);
    stream->wait();
  };
  return prepared;
}

}  // namespace pto::bench
