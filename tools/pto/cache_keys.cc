#include "tools/pto/cache_keys.h"

#include <cstdio>

#include "cache/key_file.h"
#include "tools/pto/flags.h"

namespace pto::tools {

int CacheKeygen(const std::vector<std::string>& args) {
  Flags flags(args);
  const std::string out = flags.String("out");
  const std::string comment = flags.String("comment");
  if (!flags.CheckAllUsed("cache keygen") || !flags.ok()) return flags.Fail("cache keygen");
  if (!flags.positional().empty() || out.empty() || out == "true") {
    std::fprintf(stderr, "pto cache keygen: %s\n%s",
                 flags.positional().empty()
                     ? "--out NAME is required"
                     : ("unexpected argument '" + flags.positional()[0] + "'").c_str(),
                 kKeygenUsage);
    return 2;
  }
  absl::StatusOr<cache::SecretKey> key = cache::SecretKey::Generate();
  absl::StatusOr<cache::KeyPairFiles> files =
      key.ok() ? cache::WriteKeyPairFiles(*key, out, comment == "true" ? "" : comment)
               : key.status();
  if (!files.ok()) {
    std::fprintf(stderr, "pto cache keygen: %s\n", std::string(files.status().message()).c_str());
    return 1;
  }
  std::printf("wrote secret key %s (mode 0600) and public key %s (mode 0644)\n",
              files->secret_path.c_str(), files->public_path.c_str());
  std::printf("key %s\n", key->public_key().Id().c_str());
  std::printf("sign bundles with `pto cache export --sign %s`; importers pass `--trust-key %s`\n",
              files->secret_path.c_str(), files->public_path.c_str());
  return 0;
}

absl::StatusOr<std::vector<cache::PublicKey>> ReadTrustedKeys(const std::vector<std::string>& files,
                                                              const std::string& cache_dir) {
  std::vector<cache::PublicKey> keys;
  for (const std::string& file : files) {
    absl::StatusOr<cache::PublicKey> key =
        cache::ReadTrustedKeyFile(file, {.cache_dir = cache_dir});
    if (!key.ok()) return key.status();
    keys.push_back(*std::move(key));
  }
  return keys;
}

}  // namespace pto::tools
