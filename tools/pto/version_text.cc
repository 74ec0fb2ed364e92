#include "tools/pto/version_text.h"

#include <llvm/Config/llvm-config.h>

#include "absl/strings/str_cat.h"
#include "device/device_info.h"
#include "jit/kernel_abi.h"

// The project's version (project(pto VERSION ...)), set by tools/CMakeLists.txt.
#ifndef PTO_PROJECT_VERSION
#error "PTO_PROJECT_VERSION must be defined by the build"
#endif

namespace pto::tools {

std::string VersionText() {
  const device::DeviceInfo host = device::DetectHost();
  return absl::StrCat("pto ", PTO_PROJECT_VERSION, "\nkernel ABI ", jit::kKernelAbiVersion,
                      "\nLLVM ", LLVM_VERSION_STRING, "\nhost ISA ", device::IsaName(host.isa),
                      " (", host.cpu_name, ", ", host.vector_bits, "-bit vectors)");
}

}  // namespace pto::tools
