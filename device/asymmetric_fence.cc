#include "device/asymmetric_fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "device/sanitizers.h"

namespace pto::device {
namespace {

long Membarrier(int command) { return syscall(__NR_membarrier, command, 0, 0); }

bool Register() {
#if PTO_UNDER_TSAN
  return false;
#else
  const long commands = Membarrier(MEMBARRIER_CMD_QUERY);
  if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0 ||
      (commands & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0) {
    return false;
  }
  return Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
#endif
}

}  // namespace

bool AsymmetricFencesAvailable() {
  static const bool available = Register();
  return available;
}

bool HeavyFence() { return Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0; }

}  // namespace pto::device
