#include "tools/pto/cache_keys.h"

#include <cstdio>
#include <memory>
#include <string>

#include "cache/key_file.h"

namespace pto::tools {

namespace {

struct KeygenOptions {
  std::string out;      // NAME
  std::string comment;  // TEXT
};

int Keygen(const CLI::App& command, const KeygenOptions& o) {
  if (o.out.empty()) return UsageError(command, "--out NAME is required");
  absl::StatusOr<cache::SecretKey> key = cache::SecretKey::Generate();
  absl::StatusOr<cache::KeyPairFiles> files =
      key.ok() ? cache::WriteKeyPairFiles(*key, o.out, o.comment) : key.status();
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

}  // namespace

void AddKeygenCommand(CommandLine& cli, CLI::App& cache) {
  auto o = std::make_shared<KeygenOptions>();
  CLI::App* keygen =
      cli.AddCommand(cache, "keygen",
                     "make an Ed25519 signing key pair: NAME (the secret key, mode\n"
                     "0600) and NAME.pub (the public key, mode 0644); never overwrites\n"
                     "a file. Sign bundles with `pto cache export --sign NAME`;\n"
                     "importers trust them with `pto cache import --trust-key NAME.pub`",
                     [o](const CLI::App& command) { return Keygen(command, *o); });
  keygen->add_option("--out", o->out, "where the key pair goes: NAME and NAME.pub")
      ->type_name("NAME");
  keygen->add_option("--comment", o->comment, "a comment stored with the keys (who, what for)")
      ->type_name("TEXT");
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
