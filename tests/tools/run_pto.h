// Running the `pto` program from tests: its exit code and everything it printed.
#ifndef PTO_TESTS_TOOLS_RUN_PTO_H_
#define PTO_TESTS_TOOLS_RUN_PTO_H_

#include <string>

namespace pto::testing {

struct PtoResult {
  int exit_code = -1;  // -1 when it could not be run or did not exit normally
  std::string output;  // stdout and stderr
};

// Runs `PTO ARGS` through the shell, with the environment assignments `env` ("NAME=value
// ...") in front.
PtoResult RunPtoBinary(const std::string& pto, const std::string& args,
                       const std::string& env = "");

// What the program printed on each stream.
struct PtoStreams {
  int exit_code = -1;  // -1 when it could not be run or did not exit normally
  std::string out, err;
};

// Runs `PTO ARGS` through the shell, keeping stdout and stderr apart.
PtoStreams RunPtoStreams(const std::string& pto, const std::string& args);

// How many lines of `text` contain `needle`.
int CountLines(const std::string& text, const std::string& needle);

}  // namespace pto::testing

#endif  // PTO_TESTS_TOOLS_RUN_PTO_H_
