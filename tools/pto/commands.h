// The commands of the `pto` program.
#ifndef PTO_TOOLS_PTO_COMMANDS_H_
#define PTO_TOOLS_PTO_COMMANDS_H_

#include <string>
#include <vector>

#include "tools/pto/command_line.h"

namespace pto::tools {

// Each adds its command (and the command's subcommands) to `cli`.
void AddDemoCommand(CommandLine& cli);
void AddDumpCommand(CommandLine& cli);
void AddRunCommand(CommandLine& cli);
void AddTuneCommand(CommandLine& cli);

// Not yet on CommandLine: each returns the process exit code; `args` excludes the command name.
int CacheCommand(const std::vector<std::string>& args);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_COMMANDS_H_
