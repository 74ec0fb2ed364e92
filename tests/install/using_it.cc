// The README's "Using it" example as an embedder's program: readme_example.inc is the README's
// code block, extracted between its markers by downstream_test.sh and included here as written,
// on small inputs this file prepares. It checks the example's two results (the call into
// caller memory and the allocating call) against the MLP computed here in plain C++, prints
// one line and exits 0 only when both match.
#include <pto/pto.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr int64_t kBatch = 3, kIn = 8, kHidden = 16, kOut = 4;
constexpr float kTolerance = 1e-4f;

std::vector<float> Ramp(int64_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7) % 11 - 5) + offset;
  return v;
}

// matmul(gelu(x · w1ᵀ + b1), w2) with w1 [hidden, in] (linear's layout) and w2 [hidden, out].
std::vector<float> ExpectedMlp(const std::vector<float>& x, const std::vector<float>& w1,
                               const std::vector<float>& b1, const std::vector<float>& w2) {
  std::vector<float> out(kBatch * kOut, 0.0f);
  for (int64_t b = 0; b < kBatch; ++b) {
    for (int64_t h = 0; h < kHidden; ++h) {
      double pre = b1[h];
      for (int64_t i = 0; i < kIn; ++i) pre += double{x[b * kIn + i]} * w1[h * kIn + i];
      const double act = 0.5 * pre * (1.0 + std::erf(pre / std::sqrt(2.0)));
      for (int64_t o = 0; o < kOut; ++o)
        out[b * kOut + o] += static_cast<float>(act * w2[h * kOut + o]);
    }
  }
  return out;
}

// The largest difference between `got` and `want`, or INFINITY for a size mismatch.
float MaxDifference(const float* got, int64_t got_size, const std::vector<float>& want) {
  if (got_size != static_cast<int64_t>(want.size())) return INFINITY;
  float worst = 0;
  for (int64_t i = 0; i < got_size; ++i) worst = std::fmax(worst, std::fabs(got[i] - want[i]));
  return worst;
}

}  // namespace

int main() {
  std::vector<float> x_data = Ramp(kBatch * kIn, 0.1f, 0.05f);
  std::vector<float> w1_data = Ramp(kHidden * kIn, 0.02f, 0.0f);
  std::vector<float> b1_data = Ramp(kHidden, 0.01f, 0.1f);
  std::vector<float> w2_data = Ramp(kHidden * kOut, 0.03f, -0.01f);
  std::vector<float> out_data(kBatch * kOut, NAN);
  pto::TensorView x = pto::TensorView::Dense(x_data.data(), {kBatch, kIn});
  pto::TensorView w1 = pto::TensorView::Dense(w1_data.data(), {kHidden, kIn});
  pto::TensorView b1 = pto::TensorView::Dense(b1_data.data(), {kHidden});
  pto::TensorView w2 = pto::TensorView::Dense(w2_data.data(), {kHidden, kOut});
  pto::TensorView out = pto::TensorView::Dense(out_data.data(), {kBatch, kOut});
  const std::vector<float> expected = ExpectedMlp(x_data, w1_data, b1_data, w2_data);

  // pto/pto.h, included again by the example, is already included above.
#include "readme_example.inc"

  if (!s.ok()) {
    std::fprintf(stderr, "using_it: Call failed: %s\n", s.ToString().c_str());
    return 1;
  }
  if (!r.ok() || r->size() != 1) {
    std::fprintf(stderr, "using_it: the allocating call failed: %s\n",
                 r.ok() ? "not one output" : r.status().ToString().c_str());
    return 1;
  }
  const float call_error = MaxDifference(out_data.data(), out.num_elements(), expected);
  const float allocating_error = MaxDifference((*r)[0].data(), (*r)[0].num_elements(), expected);
  std::printf("using_it: batch %lld, max difference from the reference: Call %g, allocating %g\n",
              static_cast<long long>(kBatch), call_error, allocating_error);
  if (!(call_error <= kTolerance && allocating_error <= kTolerance)) {
    std::fprintf(stderr, "using_it: results differ from the reference by more than %g\n",
                 kTolerance);
    return 1;
  }
  std::printf("using_it: ok\n");
  return 0;
}
