// What Function::Bind keeps for a BoundCall: the class its views' shapes found, the symbol
// values bound there, the size of every tensor (for the pointer checks) and the bound views
// themselves (for the full checks' messages when a pointer check fails, and for reading the
// constant inputs when they are stale).
#ifndef PTO_JIT_BOUND_CALL_H_
#define PTO_JIT_BOUND_CALL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pto/tensor.h"

namespace pto::detail {

class FunctionImpl;
struct CompiledClass;

struct BoundCallState {
  FunctionImpl* function = nullptr;
  // Expires when the Function is destroyed: a later call is refused instead of reading freed
  // memory (a call racing the destruction is as undefined as a Function call would be).
  std::weak_ptr<const void> alive;
  std::string name;                    // the Function's, for that refusal
  const CompiledClass* cls = nullptr;  // the dispatch table keeps it while the Function lives
  std::vector<int64_t> values;
  std::vector<uint64_t> bytes;  // inputs, then outputs
  std::vector<TensorView> inputs;
  std::vector<TensorView> outputs;
};

}  // namespace pto::detail

#endif  // PTO_JIT_BOUND_CALL_H_
