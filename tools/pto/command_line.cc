#include "tools/pto/command_line.h"

#include <cstdio>

namespace pto::tools {
namespace {

// The deepest command the command line named (the program itself when it names none).
const CLI::App& Selected(const CLI::App& root) {
  const CLI::App* command = &root;
  while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
  return *command;
}

}  // namespace

CommandLine::CommandLine(const std::string& name, const std::string& description)
    : root_(description, name) {
  root_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  root_.get_formatter()->label("SUBCOMMAND", "COMMAND");  // the formatter is shared
  // One command at most: a later word is the command's argument (a graph file named `run`),
  // never another command. Subcommands inherit the option defaults.
  root_.require_subcommand(0, 1);
  AddHelpWord(root_);
}

CLI::App* CommandLine::AddCommand(CLI::App& parent, const std::string& name,
                                  const std::string& description, CommandFn run) {
  CLI::App* command = parent.add_subcommand(name, description);
  command->group("Commands");
  commands_.emplace_back(command, std::move(run));
  return command;
}

CLI::App* CommandLine::AddGroup(CLI::App& parent, const std::string& name,
                                const std::string& description) {
  CLI::App* group = parent.add_subcommand(name, description);
  group->group("Commands");
  group->require_subcommand(0, 1);
  AddHelpWord(*group);
  return group;
}

// `pto help` and `pto cache help`, kept from before -h and --help; not listed in the usage.
void CommandLine::AddHelpWord(CLI::App& group) {
  CLI::App* help = AddCommand(group, "help", "", [](const CLI::App& command) {
    std::fputs(Usage(*command.get_parent()).c_str(), stdout);
    return 0;
  });
  help->group("");
}

const CommandFn* CommandLine::Find(const CLI::App& command) const {
  for (const auto& [app, run] : commands_) {
    if (app == &command) return &run;
  }
  return nullptr;
}

int CommandLine::Run(int argc, const char* const* argv) {
  try {
    root_.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help, -h and --version end the parse with success: CLI11 prints them on stdout.
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return root_.exit(e);
    const CLI::App& command = Selected(root_);
    const std::vector<std::string> extras = root_.remaining(/*recurse=*/true);
    if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr || extras.empty()) {
      return UsageError(command, e.what());
    }
    const std::string& extra = extras.front();
    if (extra.starts_with("-")) {
      return UsageError(command, "unknown flag " + extra.substr(0, extra.find('=')));
    }
    if (Find(command) == nullptr) {
      return UsageError(
          command,
          (&command == &root_ ? "unknown command '" : "unknown subcommand '") + extra + "'");
    }
    return UsageError(command, "unexpected argument '" + extra + "'");
  }
  const CLI::App& command = Selected(root_);
  const CommandFn* run = Find(command);
  if (run == nullptr) {
    return UsageError(command, &command == &root_ ? "missing command" : "missing subcommand");
  }
  return (*run)(command);
}

std::string CommandPath(const CLI::App& command) {
  std::string path = command.get_name();
  for (const CLI::App* p = command.get_parent(); p != nullptr; p = p->get_parent()) {
    path = p->get_name() + " " + path;
  }
  return path;
}

std::string Usage(const CLI::App& command) {
  return command.get_formatter()->make_help(&command, CommandPath(command),
                                            CLI::AppFormatMode::Normal);
}

int UsageError(const CLI::App& command, std::string_view message) {
  std::fprintf(stderr, "%s: %.*s\n%s", CommandPath(command).c_str(),
               static_cast<int>(message.size()), message.data(), Usage(command).c_str());
  return kExitUsage;
}

CLI::Option* AddRepeatedOption(CLI::App& command, const std::string& name,
                               std::vector<std::string>& values, const std::string& description) {
  return command.add_option(name, values, description)->allow_extra_args(false);
}

}  // namespace pto::tools
