// pto: the command-line program. `pto demo`, `pto dump`, `pto run`, `pto cache`, `pto tune`,
// `pto train`; `pto --version`; `pto COMMAND --help` (tools/pto/command_line.h: the conventions).
#include "tools/pto/command_line.h"
#include "tools/pto/commands.h"
#include "tools/pto/version_text.h"

int main(int argc, char** argv) {
  pto::tools::CommandLine cli("pto", "pto: a JIT runtime for tensor programs on the CPU.");
  cli.root().set_version_flag(
      "--version", [] { return pto::tools::VersionText(); },
      "Print pto's version, the kernel ABI and LLVM versions and the\nhost's ISA, and exit");
  pto::tools::AddDemoCommand(cli);
  pto::tools::AddDumpCommand(cli);
  pto::tools::AddRunCommand(cli);
  pto::tools::AddCacheCommands(cli);
  pto::tools::AddTuneCommand(cli);
  pto::tools::AddTrainCommand(cli);
  // After the commands: a subcommand inherits the footer its parent has when it is added.
  cli.root().footer(
      "Run `pto COMMAND --help` for a command's options. Exit codes: 0 done, 1 failed, 2 a "
      "usage error\n(its message and the usage on stderr).");
  return cli.Run(argc, argv);
}
