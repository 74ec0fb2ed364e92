#include "tuner/cost_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace pto::tuner {
namespace {

// Solves (A) x = b in place for a symmetric positive definite n x n matrix A (row-major),
// by Cholesky factorization. A is overwritten by its factor.
void CholeskySolve(std::vector<double>& a, std::vector<double>& b, int n) {
  for (int j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (int k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    // K + ridge*I is positive definite; guard against rounding anyway.
    d = std::sqrt(std::max(d, 1e-12));
    a[j * n + j] = d;
    for (int i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (int k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / d;
    }
  }
  for (int i = 0; i < n; ++i) {  // L y = b
    double s = b[i];
    for (int k = 0; k < i; ++k) s -= a[i * n + k] * b[k];
    b[i] = s / a[i * n + i];
  }
  for (int i = n - 1; i >= 0; --i) {  // L^T x = y
    double s = b[i];
    for (int k = i + 1; k < n; ++k) s -= a[k * n + i] * b[k];
    b[i] = s / a[i * n + i];
  }
}

}  // namespace

CostModel::CostModel(const SearchSpace& space, CostModelOptions options)
    : space_(&space), options_(options) {
  assert(options_.ridge > 0);
}

double CostModel::Kernel(const Config& a, const Config& b) const {
  int m = 0;
  for (size_t p = 0; p < a.size(); ++p) m += a[p] == b[p];
  return m + options_.pair_weight * 0.5 * m * (m - 1);
}

void CostModel::Fit(const std::vector<std::pair<Config, double>>& samples) {
  configs_.clear();
  alpha_.clear();
  mean_ = 0;
  std::vector<std::pair<Config, double>> usable;
  for (const auto& [config, seconds] : samples) {
    if (seconds > 0 && std::isfinite(seconds) &&
        static_cast<int>(config.size()) == space_->num_parameters()) {
      usable.emplace_back(config, std::log(seconds));
    }
  }
  if (static_cast<int>(usable.size()) > options_.max_samples) {
    std::stable_sort(usable.begin(), usable.end(),
                     [](const auto& x, const auto& y) { return x.second < y.second; });
    usable.resize(options_.max_samples);
  }
  const int n = static_cast<int>(usable.size());
  if (n == 0) return;
  for (const auto& [config, y] : usable) mean_ += y;
  mean_ /= n;
  std::vector<double> k(static_cast<size_t>(n) * n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j <= i; ++j) {
      const double v = Kernel(usable[i].first, usable[j].first);
      k[i * n + j] = v;
      k[j * n + i] = v;
    }
    k[i * n + i] += options_.ridge;
  }
  alpha_.resize(n);
  for (int i = 0; i < n; ++i) alpha_[i] = usable[i].second - mean_;
  CholeskySolve(k, alpha_, n);
  configs_.reserve(n);
  for (auto& [config, y] : usable) configs_.push_back(std::move(config));
}

double CostModel::PredictLogSeconds(const Config& config) const {
  double y = mean_;
  for (size_t i = 0; i < configs_.size(); ++i) y += alpha_[i] * Kernel(config, configs_[i]);
  return y;
}

}  // namespace pto::tuner
