// What `pto --version` prints.
#ifndef PTO_TOOLS_PTO_VERSION_TEXT_H_
#define PTO_TOOLS_PTO_VERSION_TEXT_H_

#include <string>

namespace pto::tools {

// Four lines: pto's version, the kernel ABI version (jit/kernel_abi.h), the LLVM version kernels
// are compiled with, and the host's vector ISA as device::DetectHost finds it (with the CPU
// name LLVM targets).
std::string VersionText();

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_VERSION_TEXT_H_
