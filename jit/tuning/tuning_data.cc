#include "jit/tuning/tuning_data.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "device/yield_point.h"
#include "ops/derived_symbols.h"
#include "ops/reference.h"

namespace pto::jit {
namespace {

// The sizes an i32 input indexes into: the extent of each gather or scatter_add axis it is the
// index of, each one_hot depth, followed through movement ops. Random indices below the
// smallest select real elements; 8 when the input indexes nothing (any value is valid then).
int64_t IndexBound(const ir::Graph& g, int input, std::span<const int64_t> symbols) {
  constexpr int64_t kUnbounded = 8;
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  int64_t bound = kNone;
  std::vector<bool> reached(g.nodes.size(), false);
  reached[input] = true;
  const auto extent = [&](const ir::Node& like, int64_t axis) {
    const int64_t rank = static_cast<int64_t>(like.shape.size());
    if (axis < 0) axis += rank;
    return axis >= 0 && axis < rank ? like.shape[axis].Evaluate(symbols) : kUnbounded;
  };
  for (size_t id = input + 1; id < g.nodes.size(); ++id) {
    const ir::Node& n = g.nodes[id];
    for (size_t slot = 0; slot < n.inputs.size(); ++slot) {
      if (!reached[n.inputs[slot]]) continue;
      int64_t b = -1;
      if (n.op == ir::OpKind::kGather && slot == 1) b = extent(g.nodes[n.inputs[0]], n.attrs.axis);
      if (n.op == ir::OpKind::kScatterAdd && slot == 2) {
        b = extent(g.nodes[n.inputs[0]], n.attrs.axis);
      }
      if (n.op == ir::OpKind::kOneHot && slot == 0 && n.attrs.ints.size() == 1) b = n.attrs.ints[0];
      if (b >= 1) bound = std::min(bound, b);
      const bool moves = n.op == ir::OpKind::kReshape || n.op == ir::OpKind::kTranspose ||
                         n.op == ir::OpKind::kSlice || n.op == ir::OpKind::kBroadcastTo ||
                         n.op == ir::OpKind::kConcat;
      if (moves && n.dtype == ir::DType::kI32) reached[id] = true;
    }
  }
  return bound == kNone ? kUnbounded : bound;
}

// Indices drawn uniformly from [0, bound) by the same generator as HostTensor::Random.
ops::HostTensor RandomIndices(std::vector<int64_t> shape, uint64_t seed, int64_t bound) {
  ops::HostTensor t = ops::HostTensor::Zeros(std::move(shape), ir::DType::kI32);
  std::mt19937_64 gen(seed);
  for (double& v : t.wide) v = static_cast<double>(gen() % static_cast<uint64_t>(bound));
  return t;
}

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
  data.raw_inputs.resize(traced.num_inputs);
  for (const ir::Node& node : traced.nodes) {
    if (node.op != ir::OpKind::kInput) continue;
    std::vector<int64_t> shape;
    for (const ir::SymExpr& d : node.shape) shape.push_back(d.Evaluate(symbols));
    device::YieldPoint();  // the background tuner waits here while calls run
    const uint64_t input_seed = seed + static_cast<uint64_t>(node.attrs.index);
    ops::HostTensor& t = data.inputs[node.attrs.index];
    if (node.dtype == ir::DType::kI32) {
      const int id = static_cast<int>(&node - traced.nodes.data());
      t = RandomIndices(std::move(shape), input_seed, IndexBound(traced, id, symbols));
      // The plan reads the int32 values; the reference reads `wide`.
      data.raw_inputs[node.attrs.index] = t.I32Values();
    } else {
      t = ops::HostTensor::Random(std::move(shape), input_seed);
    }
  }
  for (int o : traced.outputs) {
    std::vector<int64_t> shape;
    for (const ir::SymExpr& d : traced.nodes[o].shape) shape.push_back(d.Evaluate(symbols));
    // 4-byte elements of either dtype: an i32 output's values are its int32 bit patterns.
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

namespace {

absl::Status RunPlan(const Plan& plan, ProgramData& data, device::ThreadArena* threads,
                     device::AlignedBuffer* intermediates) {
  std::vector<void*> in, out;
  for (size_t i = 0; i < data.inputs.size(); ++i) in.push_back(data.InputBuffer(i));
  for (ops::HostTensor& t : data.outputs) {
    std::fill(t.data.begin(), t.data.end(), 0.0f);
    out.push_back(t.data.data());
  }
  return plan.Run(data.symbols, in.data(), out.data(), threads, /*kernel_seconds=*/nullptr,
                  /*observer=*/nullptr, intermediates);
}

// The largest finite magnitude of a reference output (errors are relative to it).
double Scale(const std::vector<float>& want) {
  double scale = 0;
  for (float w : want) {
    if (std::isfinite(w)) scale = std::max(scale, static_cast<double>(std::abs(w)));
  }
  return std::max(scale, 1e-30);
}

// |got - want| relative to `scale`: 0 when equal (infinities too) or both NaN, +inf when only
// one is NaN.
double ElementError(float got, float want, double scale) {
  if (got == want || (std::isnan(got) && std::isnan(want))) return 0;
  const double err = std::abs(static_cast<double>(got) - static_cast<double>(want)) / scale;
  return std::isnan(err) ? std::numeric_limits<double>::infinity() : err;
}

int32_t I32At(const std::vector<float>& bits, size_t i) {
  int32_t value;
  std::memcpy(&value, &bits[i], sizeof(value));
  return value;
}

// What element i of output o's error is relative to: the reference's largest finite magnitude
// (1 for an i32 output, whose errors are 0 or +inf).
double ScaleOf(const ProgramData& data, size_t o) {
  const ops::HostTensor& want = data.expected[o];
  return want.dtype == ir::DType::kI32 ? 1 : Scale(want.data);
}

// Element i of output o against the reference: ElementError, or for an i32 output 0 when equal
// and +inf when not (an i32 output holds its int32 bit patterns).
double ErrorAt(const ProgramData& data, size_t o, size_t i, double scale) {
  const std::vector<float>& got = data.outputs[o].data;
  const ops::HostTensor& want = data.expected[o];
  if (want.dtype == ir::DType::kI32) {
    return I32At(got, i) == static_cast<int32_t>(want.wide[i])
               ? 0
               : std::numeric_limits<double>::infinity();
  }
  return ElementError(got[i], want.data[i], scale);
}

}  // namespace

std::vector<double> OutputErrors(const ProgramData& data) {
  std::vector<double> errors(data.outputs.size(), 0.0);
  for (size_t o = 0; o < data.outputs.size(); ++o) {
    const double scale = ScaleOf(data, o);
    for (size_t i = 0; i < data.outputs[o].data.size(); ++i) {
      errors[o] = std::max(errors[o], ErrorAt(data, o, i, scale));
    }
  }
  return errors;
}

double CheckTolerance(const ProgramData& data, size_t output) {
  // Two correct plans differ in the order of their float sums; downstream ops that amplify
  // rounding (a division by a small value, a cancellation) amplify both alike.
  constexpr double kBaselineFactor = 4;
  const double baseline = output < data.baseline_errors.size() ? data.baseline_errors[output] : 0;
  return std::max(data.tolerance, kBaselineFactor * baseline);
}

absl::Status CompareOutputs(const ProgramData& data) {
  for (size_t o = 0; o < data.outputs.size(); ++o) {
    const std::vector<float>& got = data.outputs[o].data;
    const ops::HostTensor& want = data.expected[o];
    const double scale = ScaleOf(data, o);
    const double tolerance = CheckTolerance(data, o);  // finite: an i32 mismatch exceeds it
    for (size_t i = 0; i < got.size(); ++i) {
      if (ErrorAt(data, o, i, scale) <= tolerance) continue;
      if (want.dtype == ir::DType::kI32) {
        return absl::FailedPreconditionError(
            absl::StrCat("wrong answer: output ", o, " element ", i, " is ", I32At(got, i),
                         ", the reference says ", static_cast<int32_t>(want.wide[i])));
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "wrong answer: output ", o, " element ", i, " is ", got[i], ", the reference says ",
          want.data[i], " (tolerance ", tolerance * scale, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status MeasureBaseline(const Plan& plan, ProgramData& data, device::ThreadArena* threads,
                             device::AlignedBuffer* intermediates) {
  if (absl::Status s = RunPlan(plan, data, threads, intermediates); !s.ok()) return s;
  data.baseline_errors = OutputErrors(data);
  for (double& e : data.baseline_errors) {
    if (!std::isfinite(e)) e = 0;  // NaN against a number is not rounding: the fixed tolerance
  }
  return absl::OkStatus();
}

absl::Status CheckPlan(const Plan& plan, ProgramData& data, device::ThreadArena* threads,
                       device::AlignedBuffer* intermediates) {
  if (absl::Status s = RunPlan(plan, data, threads, intermediates); !s.ok()) return s;
  return CompareOutputs(data);
}

}  // namespace pto::jit
