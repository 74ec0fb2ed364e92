// Random valid tensor programs for differential testing (differential_test.cc): chains and DAGs
// over the op catalogue (elementwise, broadcasting, scalars, reductions, row ops, matmul,
// transpose, reshape, concat, slice) on inputs with static and symbolic dims of random sizes
// (0, 1, tails that are no multiple of a tile, the bounds of a symbol's range).
//
// A program is a pure function of its seed. It is built step by step, each step checked by the
// shape rules (ops::InferShape, with the same symbol table a trace builds), so every program
// traces. Values stay finite and of moderate size: log, sqrt, rsqrt and division get operands
// >= 1 (abs(x) + 1), exp only small ones. Each value carries a bound on its magnitude and on how
// far a compiled kernel may be from the ops/ reference: the per-op bounds of ops/tolerance.h,
// propagated to first order through the program; outputs are compared against that bound.
#ifndef PTO_TESTS_JIT_E2E_RANDOM_PROGRAM_H_
#define PTO_TESTS_JIT_E2E_RANDOM_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "jit/ir/graph.h"
#include "ops/host_tensor.h"
#include "ops/tolerance.h"
#include "pto/pto.h"

namespace pto::testing {

struct RandomProgramOptions {
  int max_ops = 8;      // ops drawn (not counting the wrappers that keep values in range)
  int max_symbols = 2;  // symbolic dims (named n0, n1, ...)
  int64_t max_elements = 1 << 13;  // per value, at every call
  int64_t max_size = 48;           // largest size a dim takes at a call
};

// One value of a program: an input, a scalar constant or an op on earlier values.
struct ProgramValue {
  enum class Kind { kInput, kConstant, kOp };
  Kind kind = Kind::kOp;
  int input = -1;  // kInput: the Function input
  ir::OpKind op = ir::OpKind::kInput;
  ir::Attrs attrs;        // kConstant: attrs.scalar
  std::vector<int> args;  // earlier value ids
  ir::Shape shape;        // over RandomProgram::symbols()
  double magnitude = 1;   // bound on |element|
  double floor = 0;       // bound below on |element| (a divisor's)
  double error = 0;       // bound on |pto - reference| (absolute)
  bool terminal = false;  // may hold -inf or NaN (max or mean of an empty axis): output only
};

class RandomProgram {
 public:
  static RandomProgram Generate(uint64_t seed, const RandomProgramOptions& options = {});

  uint64_t seed() const { return seed_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_calls() const { return static_cast<int>(call_values_.size()); }
  int num_ops() const;
  // The op kinds of the program's ops, for coverage counts.
  std::vector<ir::OpKind> op_kinds() const;

  // The program as a pto lambda (replays its values through the tracer).
  TraceFn trace() const;
  // Its symbolic dims, declared with the symbols' ranges.
  FunctionOptions function_options() const;
  // Random inputs (values in [-1, 1]) at the sizes of call `call`.
  std::vector<ops::HostTensor> Inputs(int call) const;
  // Per output: how far pto may be from the reference.
  std::vector<ops::Tolerance> Tolerances() const;
  // Symbols with their ranges and values per call, inputs, one line per value, outputs.
  std::string ToString() const;
  // Disagreements of the shape rules found while building (an op whose shape at a call's
  // static shapes differs from its symbolic shape evaluated there): each is a bug.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  friend class ProgramBuilder;
  uint64_t seed_ = 0;
  std::vector<ir::SymbolInfo> symbols_;            // free symbols first, then derived ones
  std::vector<std::vector<int64_t>> call_values_;  // per call: every symbol's value
  std::vector<int> inputs_;                        // value id of each Function input
  std::vector<ProgramValue> values_;
  std::vector<int> outputs_;
  std::vector<std::string> problems_;
};

}  // namespace pto::testing

#endif  // PTO_TESTS_JIT_E2E_RANDOM_PROGRAM_H_
