#include "cache/key_file.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace pto::cache {
namespace {

constexpr int kBase64Variant = sodium_base64_VARIANT_ORIGINAL;

std::string Base64(const uint8_t* bytes, size_t size) {
  std::string out(sodium_base64_ENCODED_LEN(size, kBase64Variant), '\0');
  sodium_bin2base64(out.data(), out.size(), bytes, size, kBase64Variant);
  out.resize(out.size() - 1);  // the terminating NUL
  return out;
}

// `text` shown in a message: printable ASCII only, at most 40 characters.
std::string Shown(absl::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 40)) out += c >= 0x20 && c < 0x7f ? c : '?';
  return text.size() > 40 ? out + "..." : out;
}

absl::Status BadFile(absl::string_view name, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("key file '", name, "': ", what));
}

// The 32 bytes `b64` encodes. libsodium's decoder is strict: padding required, unused bits
// zero, no other characters, so every key has one text.
absl::StatusOr<std::array<uint8_t, 32>> DecodeKey(absl::string_view b64, absl::string_view name) {
  std::vector<uint8_t> bin(b64.size() + 1);
  size_t length = 0;
  const char* end = nullptr;
  if (sodium_base642bin(bin.data(), bin.size(), b64.data(), b64.size(), nullptr, &length, &end,
                        kBase64Variant) != 0 ||
      end != b64.data() + b64.size()) {
    return BadFile(name, absl::StrCat("the key '", Shown(b64), "' is not valid base64"));
  }
  if (length != 32) {
    return BadFile(name, absl::StrCat("the key is ", length, " bytes, expected 32"));
  }
  std::array<uint8_t, 32> out;
  std::memcpy(out.data(), bin.data(), out.size());
  sodium_memzero(bin.data(), bin.size());
  return out;
}

// The fields of a key file's one line after `header` and a space, split at the first space
// into the base64 key and the rest (the comment).
struct KeyLine {
  absl::string_view key;
  absl::string_view comment;
  bool has_comment = false;
};

absl::StatusOr<KeyLine> SplitKeyLine(absl::string_view text, absl::string_view name,
                                     absl::string_view header, absl::string_view other_header,
                                     absl::string_view other_kind) {
  if (absl::EndsWith(text, "\n")) text.remove_suffix(1);
  if (text.find_first_of("\r\n") != absl::string_view::npos) {
    return BadFile(name, "expected one line");
  }
  const absl::string_view first = text.substr(0, text.find(' '));
  if (first == other_header) {
    return BadFile(name,
                   absl::StrCat("this is a ", other_kind, " key file, not a ",
                                header == kSecretKeyFileHeader ? "secret" : "public", " one"));
  }
  if (first != header || text.size() == first.size()) {
    return BadFile(name, absl::StrCat("expected a line '", header, " <base64 key>", "', found '",
                                      Shown(text), "'"));
  }
  text.remove_prefix(first.size() + 1);
  KeyLine line;
  const size_t space = text.find(' ');
  line.key = text.substr(0, space);
  if (space != absl::string_view::npos) {
    line.has_comment = true;
    line.comment = text.substr(space + 1);
  }
  return line;
}

absl::Status CheckComment(absl::string_view comment, absl::string_view name) {
  if (comment.size() > kMaxKeyCommentBytes) {
    return BadFile(name,
                   absl::StrCat("the comment is longer than ", kMaxKeyCommentBytes, " characters"));
  }
  for (const char c : comment) {
    if (c < 0x20 || c >= 0x7f) {
      return BadFile(name, "the comment holds a character that is not printable ASCII");
    }
  }
  return absl::OkStatus();
}

std::string ErrnoText() { return std::strerror(errno); }

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// `path` created anew with exactly `mode` (O_EXCL: an existing file or symlink is an error;
// fchmod: the umask does not apply).
absl::StatusOr<int> CreateExclusive(const std::string& path, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(
          absl::StrCat("'", path,
                       "' already exists (a key file is never overwritten or written through a "
                       "symlink: remove it or choose another name)"));
    }
    return absl::FailedPreconditionError(absl::StrCat("cannot create '", path, "': ", ErrnoText()));
  }
  if (::fchmod(fd, mode) != 0) {
    const std::string error = ErrnoText();
    ::close(fd);
    ::unlink(path.c_str());
    return absl::FailedPreconditionError(
        absl::StrCat("cannot set the mode of '", path, "': ", error));
  }
  return fd;
}

absl::Status WriteAllAndSync(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot write '", path, "': ", ErrnoText()));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  if (::fsync(fd) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("cannot sync '", path, "': ", ErrnoText()));
  }
  return absl::OkStatus();
}

struct OpenedKeyFile {
  std::string text;
  struct stat st {};
  std::string resolved_path;  // the opened file's path, symlinks resolved
};

// Opens `path` for reading (O_NONBLOCK: a FIFO planted there does not hang the open), checks
// that it is a small regular file and reads it.
absl::StatusOr<OpenedKeyFile> OpenKeyFile(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) {
    const std::string error = ErrnoText();
    return errno == ENOENT ? absl::NotFoundError(absl::StrCat("no key file at '", path, "'"))
                           : absl::FailedPreconditionError(
                                 absl::StrCat("cannot open key file '", path, "': ", error));
  }
  OpenedKeyFile file;
  if (::fstat(fd.get(), &file.st) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot stat key file '", path, "': ", ErrnoText()));
  }
  if (!S_ISREG(file.st.st_mode)) return BadFile(path, "not a regular file");
  if (file.st.st_size > static_cast<off_t>(kMaxKeyFileBytes)) {
    return BadFile(path, absl::StrCat("larger than ", kMaxKeyFileBytes, " bytes"));
  }
  char buffer[kMaxKeyFileBytes + 1];
  size_t size = 0;
  while (size < sizeof(buffer)) {
    const ssize_t n = ::read(fd.get(), buffer + size, sizeof(buffer) - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot read key file '", path, "': ", ErrnoText()));
    }
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }
  if (size > kMaxKeyFileBytes) {
    return BadFile(path, absl::StrCat("larger than ", kMaxKeyFileBytes, " bytes"));
  }
  file.text.assign(buffer, size);
  sodium_memzero(buffer, sizeof(buffer));
  char link[PATH_MAX + 1];
  const std::string self = absl::StrCat("/proc/self/fd/", fd.get());
  const ssize_t n = ::readlink(self.c_str(), link, PATH_MAX);
  if (n <= 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot resolve the path of key file '", path, "': ", ErrnoText()));
  }
  file.resolved_path.assign(link, static_cast<size_t>(n));
  return file;
}

std::string Mode(mode_t mode) { return absl::StrFormat("%04o", mode & 07777); }

}  // namespace

std::string FormatSecretKeyFile(const SecretKey& key) {
  std::array<uint8_t, kEd25519SeedBytes> seed = key.seed();
  std::string line =
      absl::StrCat(kSecretKeyFileHeader, " ", Base64(seed.data(), seed.size()), "\n");
  sodium_memzero(seed.data(), seed.size());
  return line;
}

std::string FormatPublicKeyFile(const PublicKey& key) {
  std::string line =
      absl::StrCat(kPublicKeyFileHeader, " ", Base64(key.bytes.data(), key.bytes.size()));
  if (!key.comment.empty()) absl::StrAppend(&line, " ", key.comment);
  return line + "\n";
}

absl::StatusOr<SecretKey> ParseSecretKeyFile(absl::string_view text, absl::string_view name) {
  absl::StatusOr<KeyLine> line =
      SplitKeyLine(text, name, kSecretKeyFileHeader, kPublicKeyFileHeader, "public");
  if (!line.ok()) return line.status();
  if (line->has_comment) return BadFile(name, "a secret key line has no comment");
  absl::StatusOr<std::array<uint8_t, 32>> seed = DecodeKey(line->key, name);
  if (!seed.ok()) return seed.status();
  absl::StatusOr<SecretKey> key = SecretKey::FromSeed(*seed);
  sodium_memzero(seed->data(), seed->size());
  return key;
}

absl::StatusOr<PublicKey> ParsePublicKeyFile(absl::string_view text, absl::string_view name) {
  absl::StatusOr<KeyLine> line =
      SplitKeyLine(text, name, kPublicKeyFileHeader, kSecretKeyFileHeader, "secret");
  if (!line.ok()) return line.status();
  if (absl::Status s = CheckComment(line->comment, name); !s.ok()) return s;
  absl::StatusOr<std::array<uint8_t, 32>> bytes = DecodeKey(line->key, name);
  if (!bytes.ok()) return bytes.status();
  if (!IsValidEd25519PublicKey(*bytes)) {
    return BadFile(name, "the key is not a valid Ed25519 public key");
  }
  PublicKey key;
  key.bytes = *bytes;
  key.comment = std::string(line->comment);
  return key;
}

absl::StatusOr<KeyPairFiles> WriteKeyPairFiles(const SecretKey& key, const std::string& name,
                                               absl::string_view comment) {
  if (absl::Status s = CheckComment(comment, name + ".pub"); !s.ok()) return s;
  KeyPairFiles files{name, name + ".pub"};
  absl::StatusOr<int> secret_fd = CreateExclusive(files.secret_path, 0600);
  if (!secret_fd.ok()) return secret_fd.status();
  Fd secret(*secret_fd);
  absl::StatusOr<int> public_fd = CreateExclusive(files.public_path, 0644);
  if (!public_fd.ok()) {
    ::unlink(files.secret_path.c_str());  // empty, and made by this call
    return public_fd.status();
  }
  Fd public_file(*public_fd);
  PublicKey public_key = key.public_key();
  public_key.comment = std::string(comment);
  std::string secret_text = FormatSecretKeyFile(key);
  absl::Status written = WriteAllAndSync(secret.get(), secret_text, files.secret_path);
  sodium_memzero(secret_text.data(), secret_text.size());
  if (written.ok()) {
    written =
        WriteAllAndSync(public_file.get(), FormatPublicKeyFile(public_key), files.public_path);
  }
  if (!written.ok()) {
    ::unlink(files.secret_path.c_str());
    ::unlink(files.public_path.c_str());
    return written;
  }
  return files;
}

absl::StatusOr<SecretKey> ReadSecretKeyFile(const std::string& path) {
  absl::StatusOr<OpenedKeyFile> file = OpenKeyFile(path);
  if (!file.ok()) return file.status();
  if ((file->st.st_mode & 077) != 0) {
    sodium_memzero(file->text.data(), file->text.size());
    return absl::FailedPreconditionError(absl::StrCat(
        "secret key file '", path, "' has mode ", Mode(file->st.st_mode),
        ": group or others may read or write it; it must be 0600 or stricter (chmod 600 '", path,
        "')"));
  }
  absl::StatusOr<SecretKey> key = ParseSecretKeyFile(file->text, path);
  sodium_memzero(file->text.data(), file->text.size());
  return key;
}

absl::StatusOr<PublicKey> ReadTrustedKeyFile(const std::string& path,
                                             const TrustedKeyOptions& options) {
  absl::StatusOr<OpenedKeyFile> file = OpenKeyFile(path);
  if (!file.ok()) return file.status();
  if ((file->st.st_mode & 022) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("trusted key file '", path, "' has mode ", Mode(file->st.st_mode),
                     ": group or others may write it, and whoever writes it decides which code "
                     "runs (chmod go-w '",
                     path, "')"));
  }
  if (file->st.st_uid != ::geteuid() && file->st.st_uid != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("trusted key file '", path, "' belongs to uid ", file->st.st_uid,
                     ", neither this user (uid ", ::geteuid(), ") nor root"));
  }
  if (!options.cache_dir.empty()) {
    std::error_code ec;
    const std::string dir =
        std::filesystem::weakly_canonical(options.cache_dir, ec).lexically_normal().string();
    if (ec) {
      return absl::FailedPreconditionError(absl::StrCat("cannot resolve the cache directory '",
                                                        options.cache_dir, "': ", ec.message()));
    }
    const std::string& key = file->resolved_path;
    const bool inside = key == dir || key.starts_with(dir.ends_with('/') ? dir : dir + "/");
    if (inside) {
      return absl::InvalidArgumentError(absl::StrCat(
          "trusted key file '", path, "' is inside the cache directory '", options.cache_dir,
          "' (it resolves to '", key,
          "'): whoever can write the cache could write the key; keep trusted keys outside it"));
    }
  }
  return ParsePublicKeyFile(file->text, path);
}

}  // namespace pto::cache
