#include "tools/bench/reference_figures.h"

#include <cmath>
#include <cstdio>

namespace pto::bench {

const std::vector<ReferenceFigure>& ReferenceFigures() {
  static const std::vector<ReferenceFigure>* figures = new std::vector<ReferenceFigure>{
      {"oneDNN", "matmul 2048x2048x2048", 330}, {"oneDNN", "linear 128x768x3072", 330},
      {"oneDNN", "matmul 384x64x384", 400},     {"oneDNN", "linear 32x4096x4096", 180},
      {"oneDNN", "linear 1x4096x4096", 10},     {"OpenBLAS", "matmul 2048x2048x2048", 180},
  };
  return *figures;
}

std::string ReferenceFlag(double measured, double reference) {
  const double off = measured / reference - 1;
  if (std::fabs(off) <= 0.15) return "";
  char text[64];
  std::snprintf(text, sizeof text, "%+.0f%% vs ref %.0f", off * 100, reference);
  return text;
}

}  // namespace pto::bench
