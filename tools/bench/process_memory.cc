#include "tools/bench/process_memory.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace pto::bench {

int64_t ProcStatusBytes(const std::string& name) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string prefix = name + ":";
  while (std::getline(status, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream fields(line.substr(prefix.size()));
    int64_t kib = -1;
    std::string unit;
    fields >> kib >> unit;
    return kib < 0 || unit != "kB" ? -1 : kib * 1024;
  }
  return -1;
}

std::string ResetPeakResident() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr)
    return std::string("cannot open /proc/self/clear_refs: ") + std::strerror(errno);
  const bool written = std::fputs("5", f) >= 0;
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed)
    return std::string("cannot write /proc/self/clear_refs: ") + std::strerror(errno);
  return "";
}

}  // namespace pto::bench
