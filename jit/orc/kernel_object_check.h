// What a kernel object may contain, checked before the JIT linker parses it: the rule that
// keeps a stored object (the cache, a bundle imported with code) from reaching into the
// process through the linker (internal to jit/).
//
// The object must be an x86-64 ELF relocatable file that
//  - defines exactly one global symbol: the kernel, a function in an executable section (no
//    other global, weak or common definition: nothing that could interpose on a process
//    symbol such as memcpy, or on another kernel);
//  - references no undefined symbol outside `allowed` (the engine binds those names itself);
//  - has no initializer or finalizer sections (.init_array, .ctors, ...), no thread-local
//    data, no section both writable and executable, no SHT_REL relocations, no extended
//    section index table;
//  - has relocations (SHT_RELA, one symbol table) only of the kinds x86-64 code generation
//    emits for kernels, each within the allocated section it patches and naming a symbol of
//    the table. JITLink applies a relocation at the offset the file gives without checking it
//    against its section's size, so an offset past the section would write outside the
//    memory the linker allocated.
// Machine code itself is not inspected: code from a store is loaded only when the store is
// trusted (see docs/cache.md); this rule keeps the linker from being the way in.
#ifndef PTO_JIT_ORC_KERNEL_OBJECT_CHECK_H_
#define PTO_JIT_ORC_KERNEL_OBJECT_CHECK_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace pto::jit {

// OK, or: InvalidArgument when the bytes are not an ELF object, NotFound when it does not
// define `symbol`, FailedPrecondition naming the first thing that breaks the rule above.
absl::Status CheckKernelObject(std::string_view object, std::string_view symbol,
                               const std::vector<std::string>& allowed);

}  // namespace pto::jit

#endif  // PTO_JIT_ORC_KERNEL_OBJECT_CHECK_H_
