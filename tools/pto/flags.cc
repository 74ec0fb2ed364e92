#include "tools/pto/flags.h"

#include <cstdio>
#include <cstdlib>

namespace pto::tools {

Flags::Flags(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) {
      positional_.push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    if (eq != std::string::npos) {
      values_.emplace(a.substr(2, eq - 2), a.substr(eq + 1));
    } else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
      values_.emplace(a.substr(2), args[++i]);
    } else {
      values_.emplace(a.substr(2), "true");
    }
  }
}

std::string Flags::String(const std::string& name, const std::string& fallback) {
  used_[name] = true;
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

int64_t Flags::Int(const std::string& name, int64_t fallback) {
  std::string s = String(name);
  if (s.empty()) return fallback;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0') {
    error_ = "--" + name + " expects an integer, got '" + s + "'";
    return fallback;
  }
  return v;
}

std::vector<std::string> Flags::All(const std::string& name) {
  used_[name] = true;
  std::vector<std::string> out;
  auto [lo, hi] = values_.equal_range(name);
  for (auto it = lo; it != hi; ++it) out.push_back(it->second);
  return out;
}

bool Flags::CheckAllUsed(const std::string& command) {
  for (const auto& [name, value] : values_) {
    if (!used_[name]) {
      error_ = "unknown flag --" + name;
      return false;
    }
  }
  return true;
}

int Flags::Fail(const std::string& command) {
  std::fprintf(stderr, "pto %s: %s\n", command.c_str(), error_.c_str());
  return 2;
}

}  // namespace pto::tools
