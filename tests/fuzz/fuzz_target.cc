#include "tests/fuzz/fuzz_target.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "google/protobuf/stubs/logging.h"

namespace pto::fuzz {
namespace {

// Protobuf logs every string field of invalid UTF-8 it parses: noise that slows fuzzing down
// (a parse failure is reported to the target anyway). Every target links this file.
const bool kProtobufLogsIgnored = [] {
  google::protobuf::SetLogHandler(nullptr);
  return true;
}();

class Scratch {
 public:
  Scratch() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/pto_fuzz.XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) CheckFailed(__FILE__, __LINE__, "mkdtemp " + pattern);
    path_ = pattern;
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

void CheckFailed(const char* file, int line, std::string_view what) {
  std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", file, line, std::string(what).c_str());
  std::abort();
}

const std::string& ScratchDir() {
  static Scratch scratch;
  return scratch.path();
}

}  // namespace pto::fuzz
