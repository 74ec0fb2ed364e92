// Returning heap pages the process has freed to the operating system. Compiling a shape class
// allocates and frees tens of MiB (LLVM's modules, passes and code buffers); glibc's allocator
// keeps freed pages mapped for reuse, so without this a Function's first call would leave its
// compile's peak in the process's resident set for good.
#ifndef PTO_DEVICE_RELEASE_MEMORY_H_
#define PTO_DEVICE_RELEASE_MEMORY_H_

namespace pto::device {

// Releases free heap pages (glibc's malloc_trim(0)): true when some were released. Costs about
// a millisecond on a heap of a few hundred MiB; for after a burst of work, not a hot path.
// Where the allocator is not glibc's (sanitizers, other C libraries), does nothing: false.
bool ReleaseFreedHeapMemory();

}  // namespace pto::device

#endif  // PTO_DEVICE_RELEASE_MEMORY_H_
