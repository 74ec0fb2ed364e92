// Running a helper program (PyTorch's side of a comparison, a bench's child) and reading what it
// printed.
#ifndef PTO_TOOLS_SUBPROCESS_H_
#define PTO_TOOLS_SUBPROCESS_H_

#include <string>

namespace pto::tools {

// Runs `command` through the shell with its stderr joined to its stdout, which it appends to
// `output`. Returns the exit status; -1 when it could not run or did not exit normally.
int RunCommand(const std::string& command, std::string& output);

}  // namespace pto::tools

#endif  // PTO_TOOLS_SUBPROCESS_H_
