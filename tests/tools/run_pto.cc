#include "tests/tools/run_pto.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <sstream>

namespace pto::testing {

PtoResult RunPtoBinary(const std::string& pto, const std::string& args, const std::string& env) {
  PtoResult r;
  const std::string command = env + " " + pto + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) {
    r.output.append(buf.data(), n);
  }
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

int CountLines(const std::string& text, const std::string& needle) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

}  // namespace pto::testing
