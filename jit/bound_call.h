// What Function::Bind keeps for a BoundCall: the class its views' shapes found, the symbol
// values bound there, the size of every tensor (for the pointer checks) and the bound views
// themselves (for the full checks' messages when a pointer check fails, and for reading the
// constant inputs when they are stale).
#ifndef PTO_JIT_BOUND_CALL_H_
#define PTO_JIT_BOUND_CALL_H_

#include <cstdint>
#include <vector>

#include "pto/tensor.h"

namespace pto::detail {

class FunctionImpl;
struct CompiledClass;

struct BoundCallState {
  FunctionImpl* function = nullptr;
  const CompiledClass* cls = nullptr;  // the dispatch table keeps it while the Function lives
  std::vector<int64_t> values;
  std::vector<uint64_t> bytes;  // inputs, then outputs
  std::vector<TensorView> inputs;
  std::vector<TensorView> outputs;
};

}  // namespace pto::detail

#endif  // PTO_JIT_BOUND_CALL_H_
