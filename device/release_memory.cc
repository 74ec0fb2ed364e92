#include "device/release_memory.h"

#include <cstdlib>  // defines __GLIBC__ with glibc

#include "device/sanitizers.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pto::device {

bool ReleaseFreedHeapMemory() {
#if defined(__GLIBC__) && !PTO_UNDER_ASAN && !PTO_UNDER_TSAN && !PTO_UNDER_MSAN
  return malloc_trim(0) == 1;
#else
  return false;  // the sanitizers' allocators serve malloc: glibc's heap is not the process's
#endif
}

}  // namespace pto::device
