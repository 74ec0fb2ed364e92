#include "jit/tuning/tuning_data.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "device/yield_point.h"
#include "ops/derived_symbols.h"
#include "ops/reference.h"

namespace pto::jit {
namespace {

// An odd value near the middle of a class (no multiple of any tile), or its smallest if there
// is none.
int64_t NotATileMultiple(const SymbolClass& c) {
  int64_t v = c.lo + (c.hi - c.lo) / 2;
  if (v % 2 == 0) ++v;
  return v <= c.hi ? v : c.lo;
}

}  // namespace

std::vector<int64_t> ProgramSymbolValues(const LoweredProgram& program,
                                         std::span<const int64_t> symbols) {
  std::vector<int64_t> values;
  for (const SymbolSource& s : program.symbol_sources) {
    values.push_back(s.symbol < 0 ? s.constant : symbols[s.symbol]);
  }
  return values;
}

int64_t KernelWork(const ir::KernelCall& call, std::span<const int64_t> kernel_symbols) {
  const std::array<ir::SymExpr, 2> grid = ir::KernelGrid(call.kernel);
  return grid[0].Evaluate(kernel_symbols) * grid[1].Evaluate(kernel_symbols) *
         call.work_per_cell.Evaluate(kernel_symbols);
}

std::vector<std::vector<int64_t>> CheckSymbolValues(const ShapeClass& cls) {
  std::set<std::vector<int64_t>> seen;
  std::vector<std::vector<int64_t>> sets;
  for (int which = 0; which < 3; ++which) {
    std::vector<int64_t> values;
    for (const SymbolClass& c : cls.symbols) {
      values.push_back(which == 0 ? c.lo : which == 1 ? c.hi : NotATileMultiple(c));
    }
    if (seen.insert(values).second) sets.push_back(std::move(values));
  }
  return sets;
}

int64_t LongestReduction(const LoweredProgram& program, std::span<const int64_t> symbols) {
  const std::vector<int64_t> values = ProgramSymbolValues(program, symbols);
  int64_t longest = 1;
  for (const ir::KernelCall& call : program.tiles.calls) {
    const ir::Kernel& k = call.kernel;
    int64_t n = 1;
    if (k.kind == ir::KernelKind::kMatMul) {
      n = k.k.Evaluate(values);
    } else if (k.kind == ir::KernelKind::kRowOp && !k.domain.empty()) {
      n = k.domain.back().Evaluate(values);
    } else if (k.kind == ir::KernelKind::kReduce && !k.domain.empty()) {
      n = k.domain[k.axis].Evaluate(values);
    }
    longest = std::max(longest, n);
  }
  return longest;
}

absl::StatusOr<ProgramData> MakeProgramData(const ir::Graph& traced, const LoweredProgram& program,
                                            std::span<const int64_t> symbols, uint64_t seed,
                                            bool reference) {
  ProgramData data;
  data.symbols.assign(symbols.begin(), symbols.end());
  // Values chosen per symbol (CheckSymbolValues) leave the derived ones to compute.
  ops::BindDerivedSymbols(traced.symbols, data.symbols);
  symbols = data.symbols;
  data.inputs.resize(traced.num_inputs);
  for (const ir::Node& node : traced.nodes) {
    if (node.op != ir::OpKind::kInput) continue;
    std::vector<int64_t> shape;
    for (const ir::SymExpr& d : node.shape) shape.push_back(d.Evaluate(symbols));
    device::YieldPoint();  // the background tuner waits here while calls run
    data.inputs[node.attrs.index] =
        ops::HostTensor::Random(std::move(shape), seed + static_cast<uint64_t>(node.attrs.index));
  }
  for (int o : traced.outputs) {
    std::vector<int64_t> shape;
    for (const ir::SymExpr& d : traced.nodes[o].shape) shape.push_back(d.Evaluate(symbols));
    data.outputs.push_back(ops::HostTensor::Filled(std::move(shape), 0.0f));
  }
  if (reference) {
    absl::StatusOr<std::vector<ops::HostTensor>> expected =
        ops::RunReference(traced, data.inputs, device::YieldPoint);
    if (!expected.ok()) return expected.status();
    data.expected = *std::move(expected);
    // A float sum of n terms is off by up to about n * eps of its terms' magnitude; the
    // polynomial transcendentals add a few ulps (docs/architecture.md states their bounds).
    data.tolerance =
        1e-5 + 4.0 * FLT_EPSILON * static_cast<double>(LongestReduction(program, symbols));
  }
  return data;
}

absl::Status CheckPlan(const Plan& plan, ProgramData& data, device::ThreadArena* threads) {
  std::vector<void*> in, out;
  for (ops::HostTensor& t : data.inputs) in.push_back(t.data.data());
  for (ops::HostTensor& t : data.outputs) {
    std::fill(t.data.begin(), t.data.end(), 0.0f);
    out.push_back(t.data.data());
  }
  if (absl::Status s = plan.Run(data.symbols, in.data(), out.data(), threads); !s.ok()) return s;
  for (size_t o = 0; o < data.outputs.size(); ++o) {
    const std::vector<float>& got = data.outputs[o].data;
    const std::vector<float>& want = data.expected[o].data;
    double scale = 0;
    for (float w : want) {
      if (std::isfinite(w)) scale = std::max(scale, static_cast<double>(std::abs(w)));
    }
    const double limit = data.tolerance * std::max(scale, 1e-30);
    for (size_t i = 0; i < got.size(); ++i) {
      const bool both_nan = std::isnan(got[i]) && std::isnan(want[i]);
      const double err = std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
      if (!both_nan && !(err <= limit) && got[i] != want[i]) {
        return absl::FailedPreconditionError(
            absl::StrCat("wrong answer: output ", o, " element ", i, " is ", got[i],
                         ", the reference says ", want[i], " (tolerance ", limit, ")"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace pto::jit
