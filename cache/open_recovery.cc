#include "cache/open_recovery.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/status.h"

namespace pto::cache {
namespace {

namespace fs = std::filesystem;

bool HoldsTableFiles(const fs::path& dir) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".sst") return true;
  }
  return false;
}

// The file name CURRENT holds (e.g. "MANIFEST-000005"), or "" if it cannot be read.
std::string NamedInCurrent(const fs::path& dir) {
  std::ifstream in(dir / "CURRENT", std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(contents.str()));
}

}  // namespace

std::optional<std::string> DamageBeforeOpen(const std::string& path) {
  std::error_code ec;
  const fs::path dir(path);
  if (fs::exists(dir / "CURRENT", ec) || !HoldsTableFiles(dir)) return std::nullopt;
  return absl::StrCat("CURRENT is missing from ", path, ", which holds table files");
}

bool IsRepairableDamage(const rocksdb::Status& status, const std::string& path) {
  if (status.IsCorruption()) return true;
  if (!status.IsPathNotFound()) return false;
  const std::string manifest = NamedInCurrent(path);
  std::error_code ec;
  return manifest.starts_with("MANIFEST-") && manifest.find('/') == std::string::npos &&
         !fs::exists(fs::path(path) / manifest, ec) && !ec;
}

}  // namespace pto::cache
