// Asymmetric fences: a reader path that runs often pays only a compiler barrier, and the rare
// writer path makes every thread of the process run a full fence for it, through Linux's
// membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED). Together they order as a pair of seq_cst fences
// would: every running thread executes a full barrier inside HeavyFence's system call, and a
// thread that is not running has passed one at its last context switch. Used by the epoch
// domain (device/epoch.h), whose readers enter on every Function call and whose writer reclaims
// only when a Plan is retired.
#ifndef PTO_DEVICE_ASYMMETRIC_FENCE_H_
#define PTO_DEVICE_ASYMMETRIC_FENCE_H_

namespace pto::device {

// Whether the kernel offers private expedited membarrier and this process registered for it.
// Decided once per process, at the first call (thread-safe); false under ThreadSanitizer, which
// models neither fences nor membarrier, and wherever the system call is refused (an old kernel,
// a seccomp filter).
bool AsymmetricFencesAvailable();

// The writer's side: a full fence on every thread of the process. False if the system call
// failed (then nothing is ordered: the caller must not rely on the readers' light fences).
// Only call when AsymmetricFencesAvailable().
bool HeavyFence();

}  // namespace pto::device

#endif  // PTO_DEVICE_ASYMMETRIC_FENCE_H_
