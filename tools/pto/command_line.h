// The command line of the `pto` program (CLI11) and the conventions every command follows:
// `--help`/`-h` prints the command's usage on stdout and exits 0; a usage error (an unknown flag
// or command, a missing or malformed value, an unexpected argument) prints "pto COMMAND:
// MESSAGE" and the command's usage on stderr and exits 2. A boolean flag takes no value after a
// space (`--checked-kernels graph.pbtxt` leaves graph.pbtxt positional; `--flag=false` turns one
// off), and a repeated option takes one value per occurrence. An option given twice keeps its
// last value.
#ifndef PTO_TOOLS_PTO_COMMAND_LINE_H_
#define PTO_TOOLS_PTO_COMMAND_LINE_H_

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"

namespace pto::tools {

inline constexpr int kExitUsage = 2;

// Runs a command once the command line parsed; `command` is its App (for UsageError). Returns
// the exit code.
using CommandFn = std::function<int(const CLI::App& command)>;

class CommandLine {
 public:
  CommandLine(const std::string& name, const std::string& description);
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  CLI::App& root() { return root_; }

  // A command of `parent` that `run` runs when the command line names it.
  CLI::App* AddCommand(CLI::App& parent, const std::string& name, const std::string& description,
                       CommandFn run);
  // A command made of subcommands (`pto cache`): given alone it is a usage error, and
  // `PARENT help` prints its usage like `PARENT --help`.
  CLI::App* AddGroup(CLI::App& parent, const std::string& name, const std::string& description);

  // Parses the command line and runs the command it names; returns the exit code.
  int Run(int argc, const char* const* argv);

 private:
  void AddHelpWord(CLI::App& group);
  const CommandFn* Find(const CLI::App& command) const;

  CLI::App root_;
  std::vector<std::pair<const CLI::App*, CommandFn>> commands_;
};

// "pto cache ls": the command's name after its parents'.
std::string CommandPath(const CLI::App& command);

// The command's help: its description, usage line, arguments, options and subcommands.
std::string Usage(const CLI::App& command);

// Prints "PATH: MESSAGE" and the command's usage on stderr; returns kExitUsage.
int UsageError(const CLI::App& command, std::string_view message);

// An option that may be given many times, one value each (`--input a --input b`), so it never
// takes the positional argument after it.
CLI::Option* AddRepeatedOption(CLI::App& command, const std::string& name,
                               std::vector<std::string>& values, const std::string& description);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_COMMAND_LINE_H_
