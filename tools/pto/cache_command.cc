// `pto cache`: look into, check, shrink, export, import and merge a kernel cache directory
// (docs/cache.md, "Bundles and the pto cache command").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "cache/bundle.h"
#include "cache/cache_key.h"
#include "cache/cache_store.h"
#include "cache/fs_safety.h"
#include "cache/key_file.h"
#include "cache/merge.h"
#include "cache/rebuild_families.h"
#include "device/device_info.h"
#include "jit/kernel_compiler.h"
#include "tools/pto/cache_dir.h"
#include "tools/pto/cache_keys.h"
#include "tools/pto/command_line.h"
#include "tools/pto/commands.h"
#include "tools/pto/tuning_spaces.h"

namespace pto::tools {
namespace {

constexpr char kDefaultDirNote[] = "DIR defaults to $PTO_CACHE_DIR, else $HOME/.cache/pto.";

// Stores opened by this command never evict on their own: only `gc` does.
constexpr int64_t kNoCapacityBound = int64_t{1} << 62;

int Failure(const std::string& subcommand, absl::string_view message) {
  std::fprintf(stderr, "pto cache %s: %.*s\n", subcommand.c_str(), static_cast<int>(message.size()),
               message.data());
  return 1;
}

// Opens the database at `dir`. With `must_exist`, a missing directory is NotFound instead of
// a new, empty cache. A database that cannot be used is an error (this command must not report
// on an empty stand-in), and so is a directory pto refuses (docs/cache.md, "Directories and
// files"); one other users could change is read-only data with kReadDataOnly.
absl::StatusOr<std::unique_ptr<cache::CacheStore>> OpenDir(const std::string& dir, bool must_exist,
                                                           cache::UnsafeDirectory unsafe) {
  std::error_code ec;
  if (must_exist && !std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("no cache directory at '", dir, "'"));
  }
  cache::CacheOptions options;
  options.path = dir;
  options.capacity_bytes = kNoCapacityBound;
  options.created_by = "pto cache";
  options.log = [](int level, std::string_view message) {
    if (level >= cache::kLogWarning) {
      std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
    }
  };
  return cache::OpenPersistentCache(options, unsafe);
}

// "64M" -> 64 MiB. Suffixes K, M, G, T (powers of 1024, optionally followed by "B" or "iB").
absl::StatusOr<int64_t> ParseBytes(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[digits]))) {
    ++digits;
  }
  int64_t value = 0;
  if (digits == 0 || !absl::SimpleAtoi(text.substr(0, digits), &value)) {
    return absl::InvalidArgumentError(absl::StrCat("--max-bytes: '", text, "' is not a size"));
  }
  std::string suffix = absl::AsciiStrToUpper(text.substr(digits));
  if (suffix.size() > 1 && (suffix.ends_with("IB") || suffix.ends_with("B"))) {
    suffix.resize(suffix.size() - (suffix.ends_with("IB") ? 2 : 1));
  }
  const std::map<std::string, int> shifts = {{"", 0},   {"B", 0},  {"K", 10},
                                             {"M", 20}, {"G", 30}, {"T", 40}};
  const auto it = shifts.find(suffix);
  if (it == shifts.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-bytes: unknown suffix in '", text, "' (use K, M, G or T)"));
  }
  if (value > (std::numeric_limits<int64_t>::max() >> it->second)) {
    return absl::InvalidArgumentError(absl::StrCat("--max-bytes: '", text, "' is too large"));
  }
  return value << it->second;
}

std::string HumanBytes(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return absl::StrFormat("%.1f %s", v, units[u]);
}

std::string Age(int64_t created_ms, int64_t now_ms) {
  if (created_ms <= 0) return "-";
  const int64_t s = std::max<int64_t>(0, (now_ms - created_ms) / 1000);
  if (s < 120) return absl::StrCat(s, "s");
  if (s < 120 * 60) return absl::StrCat(s / 60, "m");
  if (s < 48 * 3600) return absl::StrCat(s / 3600, "h");
  return absl::StrCat(s / 86400, "d");
}

// "cpu=znver4;isa=avx512;vbits=512;features=..." -> "znver4/avx512".
std::string ShortHardware(const std::string& codegen_fingerprint) {
  std::string cpu, isa;
  for (absl::string_view part : absl::StrSplit(codegen_fingerprint, ';')) {
    if (absl::ConsumePrefix(&part, "cpu=")) cpu = std::string(part);
    if (absl::ConsumePrefix(&part, "isa=")) isa = std::string(part);
  }
  if (!cpu.empty() && !isa.empty()) return cpu + "/" + isa;
  if (codegen_fingerprint.empty()) return "-";
  return codegen_fingerprint.size() <= 24 ? codegen_fingerprint
                                          : codegen_fingerprint.substr(0, 21) + "...";
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

int Ls(cache::CacheStore& store) {
  struct Row {
    proto::KernelRecord record;
    int64_t size = 0, hits = 0;
    std::string key;
  };
  std::vector<Row> kernels;
  int64_t unsound = 0, kernel_bytes = 0;
  absl::Status s = store.Scan(cache::RecordKind::kKernel, [&](const cache::ScannedRecord& r) {
    Row row;
    if (!r.problem.empty() || !row.record.ParseFromString(r.payload)) {
      ++unsound;
      return;
    }
    row.size = r.stored_bytes;
    row.hits = r.hits;
    row.key = r.key;
    kernel_bytes += r.stored_bytes;
    kernels.push_back(std::move(row));
  });
  if (!s.ok()) return Failure("ls", s.message());
  int64_t counts[2] = {0, 0};
  for (const cache::RecordKind kind : {cache::RecordKind::kPlan, cache::RecordKind::kTuning}) {
    s = store.Scan(kind, [&](const cache::ScannedRecord& r) {
      if (r.problem.empty()) {
        ++counts[kind == cache::RecordKind::kPlan ? 0 : 1];
      } else {
        ++unsound;
      }
    });
    if (!s.ok()) return Failure("ls", s.message());
  }
  std::sort(kernels.begin(), kernels.end(), [](const Row& a, const Row& b) {
    return std::tie(a.record.graph_name(), a.record.shape_class(), a.record.dtype(), a.key) <
           std::tie(b.record.graph_name(), b.record.shape_class(), b.record.dtype(), b.key);
  });
  const int64_t now = NowMs();
  if (kernels.empty()) {
    std::printf("no kernel records\n");
  } else {
    std::vector<std::vector<std::string>> rows = {
        {"GRAPH", "SHAPE CLASS", "DTYPE", "HARDWARE", "SIZE", "HITS", "AGE", "KEY"}};
    for (const Row& k : kernels) {
      rows.push_back({OrDash(k.record.graph_name()), OrDash(k.record.shape_class()),
                      OrDash(k.record.dtype()), ShortHardware(k.record.codegen_fingerprint()),
                      HumanBytes(k.size), absl::StrCat(k.hits),
                      Age(k.record.created_unix_ms(), now), k.key.substr(0, 12)});
    }
    PrintTable(rows);
  }
  std::printf("%zu kernel records (%s), %lld plan records, %lld tuning records\n", kernels.size(),
              HumanBytes(kernel_bytes).c_str(), static_cast<long long>(counts[0]),
              static_cast<long long>(counts[1]));
  if (unsound > 0) {
    std::printf("%lld unsound records (see pto cache verify)\n", static_cast<long long>(unsound));
  }
  return 0;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

int Stats(cache::CacheStore& store, const std::string& dir, bool json) {
  const cache::CacheStats s = store.TotalStats();
  // compiles: kernel records written (a compile each, or an import); puts: records of every
  // kind written (the runtime also writes a plan record per shape class).
  const std::pair<const char*, int64_t> fields[] = {{"hits", s.hits},
                                                    {"misses", s.misses},
                                                    {"corrupt", s.corrupt},
                                                    {"compiles", s.kernel_puts},
                                                    {"puts", s.puts},
                                                    {"evictions", s.evictions},
                                                    {"entries", s.entries},
                                                    {"bytes", s.bytes},
                                                    {"kernel_bytes", s.kernel_bytes}};
  if (json) {
    std::string out = absl::StrCat("{\"cache\":", JsonString(dir));
    for (const auto& [name, value] : fields) absl::StrAppend(&out, ",\"", name, "\":", value);
    std::printf("%s}\n", out.c_str());
    return 0;
  }
  std::printf("cache         %s (%s)\n", dir.c_str(), store.Role().c_str());
  for (const auto& [name, value] : fields) {
    const bool bytes = std::string_view(name).ends_with("bytes");
    std::printf("%-13s %lld%s\n", name, static_cast<long long>(value),
                bytes ? absl::StrCat(" (", HumanBytes(value), ")").c_str() : "");
  }
  return 0;
}

struct Findings {
  int64_t total = 0;
  std::vector<std::string> per_kind;                               // "2 kernel", ...
  std::vector<std::pair<cache::RecordKind, std::string>> unsound;  // removable (not the base)
  int64_t unsound_count = 0;
  int64_t damaged_families = 0;
  bool sound() const { return unsound_count == 0 && damaged_families == 0; }
};

// Scans every record, printing each unsound one and each family whose scan stopped at a
// damaged block. An error other than damage is returned.
absl::StatusOr<Findings> CheckRecords(cache::CacheStore& store) {
  Findings f;
  for (const cache::RecordKind kind :
       {cache::RecordKind::kKernel, cache::RecordKind::kPlan, cache::RecordKind::kTuning}) {
    int64_t n = 0;
    absl::Status s = store.Scan(kind, [&](const cache::ScannedRecord& r) {
      ++n;
      if (r.problem.empty()) return;
      ++f.unsound_count;
      if (!r.from_base) f.unsound.emplace_back(kind, r.key);
      std::printf("unsound %s record %s%s: %s\n", cache::RecordKindName(kind), r.key.c_str(),
                  r.from_base ? " (base)" : "", r.problem.c_str());
    });
    if (s.code() == absl::StatusCode::kDataLoss) {
      ++f.damaged_families;
      std::printf("damaged %s records: %s\n", cache::RecordKindName(kind),
                  std::string(s.message()).c_str());
    } else if (!s.ok()) {
      return s;
    }
    f.total += n;
    f.per_kind.push_back(absl::StrCat(n, " ", cache::RecordKindName(kind)));
  }
  return f;
}

std::string Summary(const Findings& f) {
  std::vector<std::string> problems;
  if (f.unsound_count > 0) problems.push_back(absl::StrCat(f.unsound_count, " unsound"));
  if (f.damaged_families > 0) {
    problems.push_back(absl::StrCat(f.damaged_families, " damaged record famil",
                                    f.damaged_families == 1 ? "y" : "ies",
                                    " (records past the damage could not be read)"));
  }
  return absl::StrFormat("checked %lld records (%s): %s", static_cast<long long>(f.total),
                         absl::StrJoin(f.per_kind, ", "),
                         problems.empty() ? "all sound" : absl::StrJoin(problems, ", "));
}

// `pto cache verify [--repair]`. The repair removes unsound records through the store, then
// closes it and rebuilds damaged families on the database itself (that needs the writer's
// lock), and checks again.
int Verify(std::unique_ptr<cache::CacheStore> store, const std::string& dir, bool repair) {
  absl::StatusOr<Findings> found = CheckRecords(*store);
  if (!found.ok()) return Failure("verify", found.status().message());
  std::printf("%s\n", Summary(*found).c_str());
  if (found->sound()) return 0;
  if (!repair) {
    std::printf(
        "pto cache verify --repair removes the unsound records and rebuilds damaged record "
        "families from the records still readable\n");
    return 1;
  }
  int64_t removed = 0;
  for (const auto& [kind, key] : found->unsound) {
    absl::Status s = store->Remove(kind, key);
    if (!s.ok()) return Failure("verify", s.message());
    ++removed;
  }
  if (removed > 0) std::printf("removed %lld unsound records\n", static_cast<long long>(removed));
  if (found->damaged_families > 0) {
    store.reset();
    absl::StatusOr<std::vector<cache::FamilyRebuild>> rebuilt = cache::RebuildDamagedFamilies(dir);
    if (!rebuilt.ok()) return Failure("verify", rebuilt.status().message());
    for (const cache::FamilyRebuild& r : *rebuilt) {
      std::printf(
          "rebuilt the %s column family from the records still readable: %lld kept, %s lost\n",
          r.family.c_str(), static_cast<long long>(r.kept),
          r.lost < 0 ? "an unknown number" : absl::StrCat(r.lost).c_str());
    }
    absl::StatusOr<std::unique_ptr<cache::CacheStore>> reopened =
        OpenDir(dir, /*must_exist=*/true, cache::UnsafeDirectory::kRefuse);
    if (!reopened.ok()) return Failure("verify", reopened.status().message());
    store = *std::move(reopened);
  }
  found = CheckRecords(*store);
  if (!found.ok()) return Failure("verify", found.status().message());
  std::printf("after the repair: %s\n", Summary(*found).c_str());
  return found->sound() ? 0 : 1;
}

int Gc(cache::CacheStore& store, int64_t max_bytes) {
  const int64_t before = store.stats().kernel_bytes;
  absl::StatusOr<int64_t> evicted = store.EvictTo(max_bytes);
  if (!evicted.ok()) return Failure("gc", evicted.status().message());
  const int64_t after = store.stats().kernel_bytes;
  std::printf("evicted %lld kernel records: kernel bytes %lld -> %lld (limit %lld)\n",
              static_cast<long long>(*evicted), static_cast<long long>(before),
              static_cast<long long>(after), static_cast<long long>(max_bytes));
  return 0;
}

int Export(cache::CacheStore& store, const std::string& out, bool with_code,
           const cache::SecretKey* sign_with) {
  absl::StatusOr<std::string> bytes =
      cache::ExportBundle(store, {.with_code = with_code, .sign_with = sign_with});
  if (!bytes.ok() && with_code && !store.code_trusted()) {
    return Failure("export", absl::StrCat(bytes.status().message(),
                                          "; export without --with-code to ship its plan and "
                                          "tuning records"));
  }
  if (!bytes.ok()) return Failure("export", bytes.status().message());
  absl::StatusOr<cache::ParsedBundle> bundle = cache::ParseBundle(*bytes);
  if (!bundle.ok()) return Failure("export", bundle.status().message());
  if (absl::Status s = cache::fs_safety::WriteFileAtomically(out, *bytes); !s.ok()) {
    return Failure("export", s.message());
  }
  const proto::BundleManifest& m = bundle->bundle.manifest();
  std::printf("wrote %s: %lld kernel, %lld plan, %lld tuning records, %s, content hash %s\n",
              out.c_str(), static_cast<long long>(m.kernel_records()),
              static_cast<long long>(m.plan_records()), static_cast<long long>(m.tuning_records()),
              HumanBytes(bytes->size()).c_str(), bundle->content_hash.c_str());
  if (bundle->signer.has_value()) {
    std::printf("signed with key %s\n", bundle->signer->Id().c_str());
  } else {
    std::printf("unsigned%s\n", with_code ? ": its object code is imported only with "
                                            "--trust-unsigned-code (pass --sign KEYFILE)"
                                          : "");
  }
  if (!with_code) std::printf("object code left out (pass --with-code to include it)\n");
  return 0;
}

// Why an import left a bundle's object code out, as `pto cache import` says it.
std::string UntrustedCodeReason(const cache::ImportReport& report) {
  if (report.kernels_untrusted == 0) return "not trusted";
  switch (report.signer) {
    case cache::BundleSigner::kUnsigned:
      return "not trusted: unsigned, pass --trust-unsigned-code";
    case cache::BundleSigner::kUntrustedKey:
      return absl::StrCat("not trusted: signed by ", report.signer_id, ", not a --trust-key key");
    case cache::BundleSigner::kTrustedKey:
      break;
  }
  return "not trusted";
}

std::string SignerLine(const cache::ImportReport& report,
                       const std::vector<cache::PublicKey>& trusted_keys) {
  switch (report.signer) {
    case cache::BundleSigner::kUnsigned:
      return "none (unsigned)";
    case cache::BundleSigner::kUntrustedKey:
      return absl::StrCat(report.signer_id, ", not a trusted key: no object code is stored");
    case cache::BundleSigner::kTrustedKey:
      break;
  }
  std::string comment;
  for (const cache::PublicKey& key : trusted_keys) {
    if (key.Id() == report.signer_id && !key.comment.empty()) comment = " (" + key.comment + ")";
  }
  return absl::StrCat(report.signer_id, comment, ", trusted");
}

int Import(cache::CacheStore& store, const std::string& file,
           const std::vector<cache::PublicKey>& trusted_keys, bool trust_unsigned_code) {
  std::ifstream f(file, std::ios::binary);
  if (!f) return Failure("import", absl::StrCat("cannot read '", file, "'"));
  std::stringstream contents;
  contents << f.rdbuf();
  const device::DeviceInfo device = device::DetectHost();
  cache::ImportOptions options;
  options.trusted_keys = trusted_keys;
  options.trust_unsigned_code = trust_unsigned_code;
  options.codegen_fingerprint = device.CodegenFingerprint();
  if (!trusted_keys.empty() || trust_unsigned_code) {
    // The fingerprint the runtime's compiler puts in kernel keys.
    absl::StatusOr<std::unique_ptr<jit::KernelCompiler>> compiler =
        jit::KernelCompiler::Create(device);
    if (!compiler.ok()) return Failure("import", compiler.status().message());
    options.compiler_fingerprint = (*compiler)->compiler_fingerprint();
  }
  options.validate_tuning = [&device](const proto::TuningRecord& record) {
    return ValidateTuningRecord(record, device);
  };
  absl::StatusOr<cache::ImportReport> report = cache::ImportBundle(store, contents.str(), options);
  if (!report.ok()) {
    return Failure("import", absl::StrCat("'", file, "': ", report.status().message()));
  }
  int64_t tuning_rejected = 0;
  for (const cache::RejectedRecord& r : report->rejected) tuning_rejected += r.kind == "tuning";
  std::printf("imported %s\n", file.c_str());
  std::printf("  signature       %s\n", SignerLine(*report, trusted_keys).c_str());
  std::printf("  tuning records  %lld accepted, %lld rejected\n",
              static_cast<long long>(report->tuning_accepted),
              static_cast<long long>(tuning_rejected));
  std::printf("  plan records    %lld\n", static_cast<long long>(report->plans));
  std::printf(
      "  kernel records  %lld stored, %lld skipped (%s), "
      "%lld skipped (built for other hardware or another compiler)\n",
      static_cast<long long>(report->kernels), static_cast<long long>(report->kernels_untrusted),
      UntrustedCodeReason(*report).c_str(), static_cast<long long>(report->kernels_other_machine));
  for (const cache::RejectedRecord& r : report->rejected) {
    std::printf("rejected %s record %s: %s\n", r.kind.c_str(), r.key.c_str(), r.reason.c_str());
  }
  return 0;
}

int Merge(cache::CacheStore& dst, cache::CacheStore& src, const std::string& other) {
  absl::StatusOr<cache::MergeReport> r = cache::MergeInto(dst, src);
  if (!r.ok()) return Failure("merge", r.status().message());
  std::printf("merged %s\n", other.c_str());
  std::printf(
      "  kernel records  %lld copied, %lld already present%s\n",
      static_cast<long long>(r->kernels_copied), static_cast<long long>(r->kernels_present),
      r->kernels_refused == 0
          ? ""
          : absl::StrCat(", ", r->kernels_refused, " refused (the source is not trusted for code: ",
                         r->kernels_refused_why, ")")
                .c_str());
  std::printf("  plan records    %lld copied, %lld already present\n",
              static_cast<long long>(r->plans_copied), static_cast<long long>(r->plans_present));
  std::printf("  tuning records  %lld copied, %lld replaced (larger speed-up), %lld kept\n",
              static_cast<long long>(r->tuning_copied), static_cast<long long>(r->tuning_replaced),
              static_cast<long long>(r->tuning_kept));
  if (r->skipped_unsound > 0) {
    std::printf("  %lld unsound records of %s skipped\n",
                static_cast<long long>(r->skipped_unsound), other.c_str());
  }
  return 0;
}

// A `pto cache` subcommand and its flags, as given (a flag of another subcommand stays empty).
struct CacheRequest {
  std::string sub;
  std::string dir;                           // --cache, else the default directory
  std::string argument;                      // import: the bundle FILE; merge: OTHER_DIR
  bool json = false;                         // stats
  bool with_code = false;                    // export
  std::string sign_file, out;                // export
  bool trust_unsigned_code = false;          // import
  std::vector<std::string> trust_key_files;  // import
  bool trust_code = false;                   // import: the flag that is gone
  bool repair = false;                       // verify
  std::string max_bytes_text;                // gc
  int64_t max_bytes = 0;                     // gc, parsed
};

// What a step returns when the command ends there: its exit status.
using ExitStatus = std::optional<int>;

// The arguments each subcommand needs, and the default directory when --cache is not given.
ExitStatus CheckArguments(const CLI::App& command, CacheRequest& r) {
  const std::string& sub = r.sub;
  if (r.trust_code) {
    return UsageError(command,
                      "--trust-code is gone: pass --trust-key PUBFILE to store object code from "
                      "bundles signed by that key, or --trust-unsigned-code to store it from "
                      "unsigned bundles");
  }
  if ((sub == "import" || sub == "merge") && r.argument.empty()) {
    return UsageError(command, sub == "import" ? "expects a bundle FILE" : "expects OTHER_DIR");
  }
  if (sub == "gc") {
    if (r.max_bytes_text.empty()) return UsageError(command, "--max-bytes N is required");
    absl::StatusOr<int64_t> parsed = ParseBytes(r.max_bytes_text);
    if (!parsed.ok()) return UsageError(command, std::string(parsed.status().message()));
    r.max_bytes = *parsed;
  }
  if (sub == "export" && r.out.empty()) return UsageError(command, "--out FILE is required");
  if (r.dir.empty()) {
    absl::StatusOr<std::string> fallback = DefaultCacheDir();
    if (!fallback.ok()) return UsageError(command, std::string(fallback.status().message()));
    r.dir = *fallback;
  }
  return std::nullopt;
}

struct Keys {
  std::optional<cache::SecretKey> signing;  // export --sign
  std::vector<cache::PublicKey> trusted;    // import --trust-key
};

ExitStatus ReadKeys(const CacheRequest& r, Keys& keys) {
  if (!r.sign_file.empty()) {
    absl::StatusOr<cache::SecretKey> key = cache::ReadSecretKeyFile(r.sign_file);
    if (!key.ok()) return Failure(r.sub, key.status().message());
    keys.signing = *std::move(key);
  }
  absl::StatusOr<std::vector<cache::PublicKey>> trusted = ReadTrustedKeys(r.trust_key_files, r.dir);
  if (!trusted.ok()) return Failure(r.sub, trusted.status().message());
  keys.trusted = *std::move(trusted);
  return std::nullopt;
}

// The cache at DIR, and for merge the one at OTHER_DIR.
ExitStatus OpenStores(const CLI::App& command, const CacheRequest& r,
                      std::unique_ptr<cache::CacheStore>& store,
                      std::unique_ptr<cache::CacheStore>& other) {
  // Reading commands need an existing cache; import and merge may create theirs.
  const bool creates = r.sub == "import" || r.sub == "merge";
  if (r.sub == "merge") {
    std::error_code ec;
    if (std::filesystem::equivalent(r.argument, r.dir, ec)) {
      return UsageError(command, "OTHER_DIR is the cache itself");
    }
    absl::StatusOr<std::unique_ptr<cache::CacheStore>> opened =
        OpenDir(r.argument, /*must_exist=*/true, cache::UnsafeDirectory::kReadDataOnly);
    if (!opened.ok()) return Failure(r.sub, opened.status().message());
    other = *std::move(opened);
  }
  // Commands that write DIR refuse one other users could change; reading ones show its data.
  const bool writes = creates || r.sub == "gc" || r.repair;
  absl::StatusOr<std::unique_ptr<cache::CacheStore>> opened =
      OpenDir(r.dir, !creates,
              writes ? cache::UnsafeDirectory::kRefuse : cache::UnsafeDirectory::kReadDataOnly);
  if (!opened.ok()) return Failure(r.sub, opened.status().message());
  store = *std::move(opened);
  return std::nullopt;
}

int RunSubcommand(const CacheRequest& r, const Keys& keys, std::unique_ptr<cache::CacheStore> store,
                  cache::CacheStore* other) {
  cache::CacheStore& s = *store;
  if (r.sub == "ls") return Ls(s);
  if (r.sub == "stats") return Stats(s, r.dir, r.json);
  if (r.sub == "verify") return Verify(std::move(store), r.dir, r.repair);
  if (r.sub == "gc") return Gc(s, r.max_bytes);
  if (r.sub == "export") {
    return Export(s, r.out, r.with_code, keys.signing.has_value() ? &*keys.signing : nullptr);
  }
  if (r.sub == "import") return Import(s, r.argument, keys.trusted, r.trust_unsigned_code);
  return Merge(s, *other, r.argument);
}

int RunCacheRequest(const CLI::App& command, CacheRequest& request) {
  if (ExitStatus e = CheckArguments(command, request)) return *e;
  // Key files are read before any cache is opened or created.
  Keys keys;
  if (ExitStatus e = ReadKeys(request, keys)) return *e;
  std::unique_ptr<cache::CacheStore> store, other;
  if (ExitStatus e = OpenStores(command, request, store, other)) return *e;
  return RunSubcommand(request, keys, std::move(store), other.get());
}

// A subcommand of `pto cache` that opens a cache (all but keygen), with its --cache option.
std::pair<CLI::App*, CacheRequest*> AddCacheSubcommand(CommandLine& cli, CLI::App& cache,
                                                       const std::string& name,
                                                       const std::string& description) {
  auto request = std::make_shared<CacheRequest>();
  request->sub = name;
  CLI::App* command = cli.AddCommand(cache, name, description, [request](const CLI::App& command) {
    return RunCacheRequest(command, *request);
  });
  command->add_option("--cache", request->dir, "the cache directory (default below)")
      ->type_name("DIR");
  command->footer(kDefaultDirNote);
  return {command, request.get()};
}

// ls, stats, verify and gc: they look into the cache at DIR (gc and verify --repair change it).
void AddInspectingCommands(CommandLine& cli, CLI::App& cache) {
  AddCacheSubcommand(cli, cache, "ls",
                     "kernel records: graph, shape class, dtype, hardware, size,\n"
                     "hits, age; plan and tuning counts");
  auto [stats, stats_request] =
      AddCacheSubcommand(cli, cache, "stats",
                         "hits, misses, corrupt, compiles, puts, entries, bytes (all\n"
                         "processes that used the cache)");
  stats->add_flag("--json", stats_request->json, "one JSON object");
  auto [verify, verify_request] =
      AddCacheSubcommand(cli, cache, "verify",
                         "check every record; exit 1 if any is unsound or a record\n"
                         "family has a damaged block");
  verify->add_flag("--repair", verify_request->repair,
                   "remove the unsound records and rebuild damaged record families\n"
                   "from the records still readable (no other process may use the\n"
                   "cache meanwhile)");
  auto [gc, gc_request] =
      AddCacheSubcommand(cli, cache, "gc", "evict least-recently-used kernels down to --max-bytes");
  gc->add_option("--max-bytes", gc_request->max_bytes_text,
                 "kernel bytes to keep at most (suffixes K, M, G, T: 64M)")
      ->type_name("N");
}

// export, import and merge: they move records between caches.
void AddShippingCommands(CommandLine& cli, CLI::App& cache) {
  auto [out, export_request] =
      AddCacheSubcommand(cli, cache, "export",
                         "write a bundle: plan and tuning records, and object code with\n"
                         "--with-code");
  out->add_option("--out", export_request->out, "the bundle file to write")->type_name("FILE");
  out->add_flag("--with-code", export_request->with_code, "include the kernels' object code");
  out->add_option("--sign", export_request->sign_file,
                  "sign the bundle with the secret key in KEYFILE (pto cache keygen)")
      ->type_name("KEYFILE");
  auto [in, import_request] =
      AddCacheSubcommand(cli, cache, "import",
                         "read a bundle: tuning configs validated against the search\n"
                         "space; object code only from a bundle signed by a --trust-key\n"
                         "key (or unsigned, with --trust-unsigned-code) and only when its\n"
                         "fingerprints are this machine's");
  in->add_option("FILE", import_request->argument, "the bundle")->type_name("");
  AddRepeatedOption(*in, "--trust-key", import_request->trust_key_files,
                    "store object code from bundles signed by the public key in\n"
                    "PUBFILE (a file outside the cache, not writable by others)")
      ->type_name("PUBFILE");
  in->add_flag("--trust-unsigned-code", import_request->trust_unsigned_code,
               "store object code from unsigned bundles");
  // Hidden: the flag is gone, and given it says what replaces it.
  in->add_flag("--trust-code", import_request->trust_code)->group("");
  auto [merge, merge_request] =
      AddCacheSubcommand(cli, cache, "merge", "merge the cache at OTHER_DIR into this one");
  merge->add_option("OTHER_DIR", merge_request->argument, "the cache to merge from")->type_name("");
}

}  // namespace

void AddCacheCommands(CommandLine& cli) {
  CLI::App* cache = cli.AddGroup(cli.root(), "cache",
                                 "inspect, check, trim, export, import and merge a kernel cache");
  AddInspectingCommands(cli, *cache);
  AddShippingCommands(cli, *cache);
  AddKeygenCommand(cli, *cache);
  // Last: a subcommand inherits the footer its parent has when it is added.
  cache->footer(absl::StrCat(
      "docs/cache.md, \"Bundles and the pto cache command\". Exit codes: 0 done, 1 failed,\n"
      "2 a usage error. ",
      kDefaultDirNote));
}

}  // namespace pto::tools
