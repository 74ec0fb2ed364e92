// Kernel objects built with LLVM for tests of what a stored object may contain (what a cache
// or bundle could hold if someone wrote it): a function `symbol` with the kernel ABI that
// stores 1 to buffers[0][0], with extras that break the kernel object rule
// (jit/orc/kernel_object_check.h).
#ifndef PTO_TESTS_JIT_CODEGEN_CRAFTED_OBJECT_H_
#define PTO_TESTS_JIT_CODEGEN_CRAFTED_OBJECT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace pto::jit::testing {

struct CraftedObject {
  // A function of the process the kernel calls as f(buffers[0], 0, lo[0] * 4) (e.g. "getpid",
  // "system", or the allowed "memset"); empty: none.
  std::string call;
  // Another global function it defines (e.g. "memcpy"); empty: none.
  std::string also_define;
  bool global_data = false;        // a global variable "pto_crafted_counter"
  bool initializer = false;        // a static constructor (an .init_array entry)
  bool thread_local_data = false;  // a thread-local variable
};

// The object file (x86-64 ELF, PIC) of `symbol` with `extras`.
absl::StatusOr<std::string> CraftObject(const std::string& symbol, const CraftedObject& extras);

// `object` with the first relocation that patches section `section` moved to `offset`.
absl::StatusOr<std::string> WithRelocationOffset(std::string object, const std::string& section,
                                                 uint64_t offset);

}  // namespace pto::jit::testing

#endif  // PTO_TESTS_JIT_CODEGEN_CRAFTED_OBJECT_H_
