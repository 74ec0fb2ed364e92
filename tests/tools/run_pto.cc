#include "tests/tools/run_pto.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace pto::testing {

namespace {

// Runs the shell command `command`, appending what it prints on stdout to `out`; returns its
// exit code, -1 when it could not be run or did not exit normally.
int RunShell(const std::string& command, std::string& out) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

PtoResult RunPtoBinary(const std::string& pto, const std::string& args, const std::string& env) {
  PtoResult r;
  r.exit_code = RunShell(env + " " + pto + " " + args + " 2>&1", r.output);
  return r;
}

PtoStreams RunPtoStreams(const std::string& pto, const std::string& args) {
  PtoStreams r;
  char err_path[] = "/tmp/pto_stderr.XXXXXX";
  const int fd = ::mkstemp(err_path);
  if (fd < 0) return r;
  ::close(fd);
  r.exit_code = RunShell(pto + " " + args + " 2>" + err_path, r.out);
  std::ifstream err(err_path);
  std::stringstream text;
  text << err.rdbuf();
  r.err = text.str();
  ::unlink(err_path);
  return r;
}

int CountLines(const std::string& text, const std::string& needle) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

}  // namespace pto::testing
