// The commands of the `pto` program.
#ifndef PTO_TOOLS_PTO_COMMANDS_H_
#define PTO_TOOLS_PTO_COMMANDS_H_

#include "tools/pto/command_line.h"

namespace pto::tools {

// Each adds its command (and the command's subcommands) to `cli`.
void AddDemoCommand(CommandLine& cli);
void AddDumpCommand(CommandLine& cli);
void AddRunCommand(CommandLine& cli);
void AddCacheCommands(CommandLine& cli);
void AddTuneCommand(CommandLine& cli);
void AddTrainCommand(CommandLine& cli);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_COMMANDS_H_
