#include "device/release_memory.h"

#include <cstdlib>  // defines __GLIBC__ with glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pto::device {

bool ReleaseFreedHeapMemory() {
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  return malloc_trim(0) == 1;
#else
  return false;  // the sanitizers' allocators serve malloc: glibc's heap is not the process's
#endif
}

}  // namespace pto::device
