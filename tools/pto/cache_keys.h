// Signing keys for `pto cache`: the `keygen` subcommand, and reading the key files that
// `export --sign` and `import --trust-key` name (formats and checks: cache/key_file.h).
#ifndef PTO_TOOLS_PTO_CACHE_KEYS_H_
#define PTO_TOOLS_PTO_CACHE_KEYS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cache/ed25519.h"
#include "tools/pto/command_line.h"

namespace pto::tools {

// Adds `pto cache keygen --out NAME [--comment TEXT]` to `cache`.
void AddKeygenCommand(CommandLine& cli, CLI::App& cache);

// The public keys in `files`, each read as a trusted key file that must not be inside
// `cache_dir` (cache::ReadTrustedKeyFile).
absl::StatusOr<std::vector<cache::PublicKey>> ReadTrustedKeys(const std::vector<std::string>& files,
                                                              const std::string& cache_dir);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_CACHE_KEYS_H_
