// Key files for signed cache bundles (docs/cache.md, "Key files"). One text line each:
//
//   secret  "pto-ed25519-secret-v1 <base64 of the 32-byte seed>"            mode 0600
//   public  "pto-ed25519-public-v1 <base64 of the 32-byte key>[ <comment>]"  mode 0644
//
// (standard base64 with padding, unused bits zero; one optional final newline). Parsing is strict:
// anything else is InvalidArgument naming the file. Files are written with explicit modes
// whatever the umask, never over an existing file and never through a symlink.
#ifndef PTO_CACHE_KEY_FILE_H_
#define PTO_CACHE_KEY_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cache/ed25519.h"

namespace pto::cache {

inline constexpr char kSecretKeyFileHeader[] = "pto-ed25519-secret-v1";
inline constexpr char kPublicKeyFileHeader[] = "pto-ed25519-public-v1";
// A key file is one short line; larger files are refused before they are read whole.
inline constexpr size_t kMaxKeyFileBytes = 4096;
inline constexpr size_t kMaxKeyCommentBytes = 256;

// The files' text, final newline included.
std::string FormatSecretKeyFile(const SecretKey& key);
std::string FormatPublicKeyFile(const PublicKey& key);

// The key in a file's `text`; `name` (the file's path) is named in every error.
absl::StatusOr<SecretKey> ParseSecretKeyFile(absl::string_view text, absl::string_view name);
absl::StatusOr<PublicKey> ParsePublicKeyFile(absl::string_view text, absl::string_view name);

struct KeyPairFiles {
  std::string secret_path;  // NAME, mode 0600
  std::string public_path;  // NAME.pub, mode 0644
};

// Writes `key` to `name` and its public key, with `comment` (printable ASCII, at most
// kMaxKeyCommentBytes; InvalidArgument otherwise), to `name`.pub. Both files are created with
// O_CREAT|O_EXCL|O_NOFOLLOW: AlreadyExists if either path exists (a symlink included); then
// neither is written.
absl::StatusOr<KeyPairFiles> WriteKeyPairFiles(const SecretKey& key, const std::string& name,
                                               absl::string_view comment);

// A secret key file. FailedPrecondition if group or others may read or write it (like ssh:
// `chmod 600` it); InvalidArgument if it is not a regular file or not a secret key file.
absl::StatusOr<SecretKey> ReadSecretKeyFile(const std::string& path);

struct TrustedKeyOptions {
  // The cache directory the key vouches for code in: a key file inside it (after resolving
  // symlinks in both paths) is refused, since whoever writes the cache could write the key.
  // Empty: none.
  std::string cache_dir;
};

// A public key file that decides which code may be stored. InvalidArgument if it is not a
// regular file, not a public key file, or inside `options.cache_dir`; FailedPrecondition if
// group or others may write it or it belongs to a user other than this one or root.
absl::StatusOr<PublicKey> ReadTrustedKeyFile(const std::string& path,
                                             const TrustedKeyOptions& options);

}  // namespace pto::cache

#endif  // PTO_CACHE_KEY_FILE_H_
