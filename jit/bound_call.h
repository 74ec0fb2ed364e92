// What Function::Bind keeps for a BoundCall: the class its views' shapes found, the symbol
// values bound there, the size of every tensor (for the pointer checks) and the bound views
// themselves (for the full checks' messages when a pointer check fails, and for reading the
// constant inputs when they are stale).
#ifndef PTO_JIT_BOUND_CALL_H_
#define PTO_JIT_BOUND_CALL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/epoch.h"
#include "jit/kernel_abi.h"
#include "jit/plan.h"
#include "pto/tensor.h"

namespace pto::detail {

class FunctionImpl;
struct CompiledClass;

// A serial one-kernel launch copied out of a class's plan (Plan::single): a warm bound call
// launches from it, reading the bound state, this and its operands. A loop that streams other
// data through the caches evicts what a call reads besides its operands; the Function, the
// class's plan and the Runtime are lines it no longer needs. Immutable once published.
struct BoundLaunch {
  static constexpr int kMaxBuffers = jit::Plan::SingleLaunch::kMaxBuffers;
  static constexpr int kMaxSymbols = jit::Plan::SingleLaunch::kMaxSymbols;
  uint64_t generation = 0;     // the class's generation it was copied at
  pto_kernel_fn fn = nullptr;  // null: that plan has no serial single launch
  int num_buffers = 0;
  int source[kMaxBuffers] = {};  // input i: i; output o: -1 - o
  int64_t extent[2] = {0, 0};
  int64_t scratch_bytes = 0;
  int64_t symbols[kMaxSymbols] = {};
};

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
  // Whether calls may launch from `launch`: no constant inputs, check_numerics off, workload
  // not recorded (each needs the general launch).
  bool launchable = false;
  device::EpochDomain* epochs = nullptr;  // the Runtime's, whose guard keeps a plan's code
  // The current copy, replaced when a call finds the class's generation moved on. Every copy
  // published stays until the state goes (one per swap of the class's plan seen), as calls
  // may still read it.
  mutable std::atomic<const BoundLaunch*> launch{nullptr};
  mutable std::mutex launches_mu;
  mutable std::vector<std::unique_ptr<const BoundLaunch>> launches;
};

}  // namespace pto::detail

#endif  // PTO_JIT_BOUND_CALL_H_
