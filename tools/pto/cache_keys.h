// Signing keys for `pto cache`: the `keygen` subcommand, and reading the key files that
// `export --sign` and `import --trust-key` name (formats and checks: cache/key_file.h).
#ifndef PTO_TOOLS_PTO_CACHE_KEYS_H_
#define PTO_TOOLS_PTO_CACHE_KEYS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cache/ed25519.h"

namespace pto::tools {

inline constexpr char kKeygenUsage[] =
    "usage: pto cache keygen --out NAME [--comment TEXT]\n"
    "  writes an Ed25519 key pair: NAME (the secret key, mode 0600) and NAME.pub (the public\n"
    "  key, mode 0644); never overwrites a file. Sign bundles with `pto cache export --sign\n"
    "  NAME`; importers trust them with `pto cache import --trust-key NAME.pub`.\n";

// `pto cache keygen ARGS` (ARGS after "keygen"); returns the exit code.
int CacheKeygen(const std::vector<std::string>& args);

// The public keys in `files`, each read as a trusted key file that must not be inside
// `cache_dir` (cache::ReadTrustedKeyFile).
absl::StatusOr<std::vector<cache::PublicKey>> ReadTrustedKeys(const std::vector<std::string>& files,
                                                              const std::string& cache_dir);

}  // namespace pto::tools

#endif  // PTO_TOOLS_PTO_CACHE_KEYS_H_
