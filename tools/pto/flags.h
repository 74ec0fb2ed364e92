// Minimal flag parsing for the pto subcommands: --name=value, --name value, and positionals.
#ifndef PTO_TOOLS_PTO_FLAGS_H_
#define PTO_TOOLS_PTO_FLAGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pto::tools {

class Flags {
 public:
  explicit Flags(const std::vector<std::string>& args);
  std::string String(const std::string& name, const std::string& fallback = "");
  int64_t Int(const std::string& name, int64_t fallback);
  // Every value of a repeatable flag (--input a --input b).
  std::vector<std::string> All(const std::string& name);
  const std::vector<std::string>& positional() const { return positional_; }
  bool ok() const { return error_.empty(); }
  // Prints the error (or unknown flags) and returns the usage exit code 2.
  int Fail(const std::string& command);
  // Flags given but never asked for are errors.
  bool CheckAllUsed(const std::string& command);

 private:
  std::multimap<std::string, std::string> values_;
  std::map<std::string, bool> used_;
  std::vector<std::string> positional_;
  std::string error_;
};

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_FLAGS_H_
