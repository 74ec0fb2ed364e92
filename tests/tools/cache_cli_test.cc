// `pto cache` as a user runs it: the real binary against caches filled by `pto demo` or by
// the store directly.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cache/bundle_signature.h"
#include "cache/cache_key.h"
#include "cache/cache_store.h"
#include "cache/ed25519.h"
#include "cache/envelope.h"
#include "cache/shared_store.h"
#include "device/device_info.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/tuning/kernel_space.h"
#include "tests/cache/cache_test_util.h"
#include "tests/tools/run_pto.h"

namespace pto {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using Result = testing::PtoResult;
using testing::CountLines;

// Runs `pto ARGS` with the environment assignments `env` ("NAME=value ...") in front.
Result RunPto(const std::string& args, const std::string& env = "") {
  return testing::RunPtoBinary(PTO_CLI_PATH, args, env);
}

// The "name":number fields of the one JSON object `text` holds; empty if it is not one flat
// object of numbers and strings.
std::map<std::string, int64_t> JsonNumbers(const std::string& text) {
  static const std::regex object(R"(^\{("[a-z_]+":("[^"]*"|-?[0-9]+)(,(?=")|(?=\})))+\}\n?$)");
  std::map<std::string, int64_t> out;
  if (!std::regex_match(text, object)) return out;
  static const std::regex field(R"re("([a-z_]+)":(-?[0-9]+))re");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), field);
       it != std::sregex_iterator(); ++it) {
    out[(*it)[1]] = std::stoll((*it)[2]);
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The bundle file `bytes` with one byte of its first object file changed and the content hash
// in its header recomputed, as anyone can (cache/bundle_signature.h: BLAKE2b-256 of the
// payload); the signature block is kept.
std::string WithEditedCode(std::string bytes) {
  const size_t elf = bytes.find(
      "\x7f"
      "ELF",
      cache::kBundleHeaderBytes);
  EXPECT_NE(elf, std::string::npos);
  bytes[elf + 64] ^= 0x20;
  const std::array<uint8_t, 32> hash =
      cache::Blake2b256(std::string_view(bytes).substr(cache::kBundleHeaderBytes));
  std::copy(hash.begin(), hash.end(), bytes.begin() + cache::kBundleHashAt);
  return bytes;
}

// The same bundle marked unsigned: signature algorithm 0, key and signature zeroed.
std::string Unsigned(std::string bytes) {
  bytes[cache::kBundleAlgorithmAt] = 0;
  std::fill(bytes.begin() + cache::kBundleSignerAt, bytes.begin() + cache::kBundleHeaderBytes,
            '\0');
  return bytes;
}

mode_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

class CacheCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pto_cache_cli_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) { return (dir_ / name).string(); }

  // A cache filled by the demo: kernel and plan records of the transformer block.
  std::string DemoCache(const std::string& name) {
    const std::string path = Path(name);
    Result r = RunPto("demo --iterations 2 --cache " + path);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return path;
  }

  std::unique_ptr<cache::CacheStore> OpenStore(const std::string& path) {
    cache::CacheOptions options;
    options.path = path;
    absl::StatusOr<std::unique_ptr<cache::CacheStore>> store = cache::OpenCache(options);
    EXPECT_TRUE(store.ok()) << store.status();
    EXPECT_TRUE((*store)->persistent());
    return *std::move(store);
  }

  std::map<std::string, int64_t> Stats(const std::string& path) {
    Result r = RunPto("cache stats --json --cache " + path);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return JsonNumbers(r.output);
  }

  std::filesystem::path dir_;
};

// A config of every elementwise kernel's space (jit/tuning/kernel_space.h) on any machine.
constexpr char kElementwiseConfig[] =
    "tile_rows=4,tile_cols=16384,vector_width=4,unroll=2,streaming_stores=0,prefetch_inputs=0";

// A tuning record of `kind`'s search space at this pto's version (jit/tuning/kernel_space.h).
proto::TuningRecord Tuning(const std::string& group, const std::string& kind,
                           const std::string& config) {
  proto::TuningRecord r;
  r.set_fusion_group_hash(group);
  r.set_bucket("batch:[1,64]");
  r.set_dtype("f32");
  r.set_performance_fingerprint("perf-of-this-test");
  r.set_search_space_version(jit::kKernelSpaceVersion);
  r.set_space_kind(kind);
  r.set_config(config);
  r.set_best_seconds(1e-4);
  r.set_default_seconds(3e-4);
  r.set_found_by("test");
  return r;
}

TEST_F(CacheCli, LsShowsOneRowPerKernelAndCounts) {
  const std::string cache = DemoCache("c");
  Result r = RunPto("cache ls --cache " + cache);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("GRAPH"));
  EXPECT_THAT(r.output, HasSubstr("SHAPE CLASS"));
  EXPECT_THAT(r.output, HasSubstr("HARDWARE"));
  const device::DeviceInfo host = device::DetectHost();
  const std::string hardware = host.cpu_name + "/" + device::IsaName(host.isa);
  const int rows = CountLines(r.output, "transformer_block");
  EXPECT_GT(rows, 0) << r.output;
  EXPECT_EQ(CountLines(r.output, hardware), rows) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.output, m,
      std::regex(R"((\d+) kernel records \(.*\), (\d+) plan records, 0 tuning records)")))
      << r.output;
  EXPECT_EQ(std::stoi(m[1]), rows);
  EXPECT_EQ(std::stoi(m[2]), 2) << "the demo's two shape classes";

  // The default directory comes from PTO_CACHE_DIR.
  Result env = RunPto("cache ls", "PTO_CACHE_DIR=" + cache);
  ASSERT_EQ(env.exit_code, 0) << env.output;
  // Ages tick between the two runs, and a wider age ("9s" -> "10s") re-pads the columns.
  const auto normalized = [](const std::string& s) {
    return std::regex_replace(std::regex_replace(s, std::regex(R"( \d+[smhd] )"), " AGE "),
                              std::regex(" +"), " ");
  };
  EXPECT_EQ(normalized(env.output), normalized(r.output));
  Result home = RunPto("cache ls", "PTO_CACHE_DIR= HOME=" + Path("home"));
  EXPECT_EQ(home.exit_code, 1) << home.output;
  EXPECT_THAT(home.output, HasSubstr("no cache directory at '" + Path("home") + "/.cache/pto'"));
}

TEST_F(CacheCli, StatsJsonHasEveryField) {
  const std::string cache = DemoCache("c");
  std::map<std::string, int64_t> stats = Stats(cache);
  for (const char* field : {"hits", "misses", "corrupt", "compiles", "puts", "evictions", "entries",
                            "bytes", "kernel_bytes"}) {
    EXPECT_TRUE(stats.contains(field)) << field;
  }
  // The demo ran cold: every kernel was a miss and was written, with the plans.
  EXPECT_GT(stats["misses"], 0);
  EXPECT_EQ(stats["corrupt"], 0);
  EXPECT_GE(stats["puts"], stats["entries"]);
  Result ls = RunPto("cache ls --cache " + cache);
  EXPECT_EQ(stats["entries"], CountLines(ls.output, "transformer_block") + 2);
  // Each kernel compiled once (one process), and the two plans are not compiles.
  EXPECT_EQ(stats["compiles"], CountLines(ls.output, "transformer_block"));
  EXPECT_EQ(stats["puts"], stats["compiles"] + 2);
  EXPECT_GT(stats["bytes"], stats["kernel_bytes"]);
  Result text = RunPto("cache stats --cache " + cache);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_THAT(text.output, HasSubstr("misses"));
  EXPECT_THAT(text.output, HasSubstr(cache));
}

TEST_F(CacheCli, VerifyExitsOneAfterARecordIsCorrupted) {
  const std::string cache = Path("c");
  std::string victim;
  {
    std::unique_ptr<cache::CacheStore> store = OpenStore(cache);
    for (const char* name : {"a", "b"}) {
      proto::KernelRecord k;
      k.set_symbol(std::string("sym_") + name);
      k.set_object(std::string(300, name[0]));
      k.set_kernel_description(std::string("kernel ") + name);
      k.set_codegen_fingerprint("cpu=test;isa=avx2");
      k.set_compiler_fingerprint("pto=test");
      ASSERT_TRUE(store->PutKernel(k).ok());
    }
    ASSERT_TRUE(store->PutTuning(Tuning("g", "elementwise", kElementwiseConfig)).ok());
    victim = cache::KernelKey({"kernel a", "cpu=test;isa=avx2", "pto=test"});
  }
  Result ok = RunPto("cache verify --cache " + cache);
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("checked 3 records (2 kernel, 0 plan, 1 tuning): all sound"));

  // Kernel "b"'s record, well wrapped, under kernel "a"'s key: written with RocksDB directly.
  proto::KernelRecord b;
  b.set_schema_version(cache::kSchemaVersion);
  b.set_symbol("sym_b");
  b.set_kernel_description("kernel b");
  b.set_codegen_fingerprint("cpu=test;isa=avx2");
  b.set_compiler_fingerprint("pto=test");
  cache::testing::RawPut(cache, "kernels", victim, cache::WrapPayload(b.SerializeAsString()));
  Result bad = RunPto("cache verify --cache " + cache);
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("unsound kernel record " + victim +
                                    ": the record's key parts do not hash to its key"));
  EXPECT_THAT(bad.output, HasSubstr("checked 3 records (2 kernel, 0 plan, 1 tuning): 1 unsound"));
  // ls leaves it out of the table and says so.
  Result ls = RunPto("cache ls --cache " + cache);
  EXPECT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_THAT(ls.output, HasSubstr("1 kernel records"));
  EXPECT_THAT(ls.output, HasSubstr("1 unsound records (see pto cache verify)"));

  // --repair removes it; the others stay.
  Result repaired = RunPto("cache verify --cache " + cache + " --repair");
  EXPECT_EQ(repaired.exit_code, 0) << repaired.output;
  EXPECT_THAT(repaired.output,
              HasSubstr("checked 3 records (2 kernel, 0 plan, 1 tuning): 1 unsound\n"
                        "removed 1 unsound records\n"
                        "after the repair: checked 2 records (1 kernel, 0 plan, 1 tuning): all "
                        "sound\n"));
  EXPECT_EQ(RunPto("cache verify --cache " + cache).exit_code, 0);
}

// One damaged data block in a family's SST file (after Flush and CompactRange): `verify`
// reports it on every run (RocksDB cannot read past it, so the records after it are out of
// reach), `verify --repair` rebuilds the family from the records still readable and says how
// many were lost, and afterwards verify passes, the intact records are kept, and the store
// takes writes and keeps them across a reopen.
class CacheCliDamage : public CacheCli, public ::testing::WithParamInterface<cache::RecordKind> {};

TEST_P(CacheCliDamage, VerifyReportsADamagedFamilyAndRepairRebuildsIt) {
  const cache::RecordKind kind = GetParam();
  const std::string family = kind == cache::RecordKind::kKernel ? "kernels"
                             : kind == cache::RecordKind::kPlan ? "plans"
                                                                : "tuning";
  const std::string name = cache::RecordKindName(kind);
  constexpr int kRecords = 160;
  const std::string cache = Path("c");
  cache::testing::FillFamilyAndCompact(cache, kind, kRecords);
  const std::filesystem::path sst =
      cache::testing::DamageSstAt(cache, cache::testing::RecordNeedle(kind, kRecords / 2));
  ASSERT_FALSE(sst.empty());

  for (int run = 0; run < 2; ++run) {  // the same on every run
    Result r = RunPto("cache verify --cache " + cache);
    if (run == 0) std::cerr << "[ verify   ]\n" << r.output;
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output,
                HasSubstr("damaged " + name + " records: scanning the " + family + " records (" +
                          cache + "): Corruption: block checksum mismatch: "));
    EXPECT_THAT(r.output, HasSubstr("in " + sst.string() + " offset "));
    EXPECT_THAT(r.output,
                HasSubstr(" tuning): 1 damaged record family (records past the damage could not "
                          "be read)\npto cache verify --repair removes the unsound records and "
                          "rebuilds damaged record families from the records still readable\n"));
  }

  Result fixed = RunPto("cache verify --cache " + cache + " --repair");
  std::cerr << "[ repair   ]\n" << fixed.output;
  EXPECT_EQ(fixed.exit_code, 0) << fixed.output;
  std::smatch m;
  const std::regex rebuilt("rebuilt the " + family +
                           " column family from the records still readable: ([0-9]+) kept, "
                           "([0-9]+) lost\n");
  ASSERT_TRUE(std::regex_search(fixed.output, m, rebuilt)) << fixed.output;
  const int kept = std::stoi(m[1]);
  const int lost = std::stoi(m[2]);
  EXPECT_EQ(kept + lost, kRecords);
  EXPECT_GE(lost, 1);
  EXPECT_LE(lost, kRecords / 8);  // one data block's records
  const std::string counts =
      absl::StrCat(kind == cache::RecordKind::kKernel ? kept : 0, " kernel, ",
                   kind == cache::RecordKind::kPlan ? kept : 0, " plan, ",
                   kind == cache::RecordKind::kTuning ? kept : 0, " tuning");
  EXPECT_THAT(fixed.output, HasSubstr("after the repair: checked " + std::to_string(kept) +
                                      " records (" + counts + "): all sound\n"));

  Result after = RunPto("cache verify --cache " + cache);
  EXPECT_EQ(after.exit_code, 0) << after.output;
  EXPECT_EQ(after.output,
            "checked " + std::to_string(kept) + " records (" + counts + "): all sound\n");
  {
    std::unique_ptr<cache::CacheStore> store = OpenStore(cache);
    EXPECT_EQ(cache::testing::CountIntactRecords(*store, kind, kRecords), kept);
    ASSERT_TRUE(store->PutKernel(cache::testing::MakeKernel("after")).ok());
  }
  std::unique_ptr<cache::CacheStore> store = OpenStore(cache);
  EXPECT_TRUE(store->GetKernel(cache::testing::KernelParts("after"))->has_value());
}

INSTANTIATE_TEST_SUITE_P(Families, CacheCliDamage,
                         ::testing::Values(cache::RecordKind::kKernel, cache::RecordKind::kPlan,
                                           cache::RecordKind::kTuning),
                         [](const ::testing::TestParamInfo<cache::RecordKind>& info) {
                           return std::string(cache::RecordKindName(info.param));
                         });

// The repair needs the writer's lock: with the cache in use by a writer, it fails and says so.
TEST_F(CacheCli, RepairWhileAnotherProcessWritesFailsWithAReason) {
  const std::string cache = Path("c");
  cache::testing::FillFamilyAndCompact(cache, cache::RecordKind::kPlan, 160);
  ASSERT_FALSE(
      cache::testing::DamageSstAt(cache, cache::testing::RecordNeedle(cache::RecordKind::kPlan, 80))
          .empty());
  std::unique_ptr<cache::CacheStore> writer = OpenStore(cache);
  ASSERT_EQ(writer->Role(), "writer");
  Result r = RunPto("cache verify --cache " + cache + " --repair");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("pto cache verify: cannot rebuild the cache database at '" + cache +
                        "' while another process (or another store in this one) has "
                        "it open as its writer: IO error: While lock file: " +
                        cache + "/LOCK: Resource temporarily unavailable\n"));
}

TEST_F(CacheCli, GcShrinksKernelBytes) {
  const std::string cache = DemoCache("c");
  const int64_t before = Stats(cache)["kernel_bytes"];
  ASSERT_GT(before, 40 << 10) << "the demo's kernels should exceed the limit below";
  Result r = RunPto("cache gc --max-bytes 40K --cache " + cache);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("evicted "));
  EXPECT_THAT(r.output, HasSubstr("(limit 40960)"));
  std::map<std::string, int64_t> after = Stats(cache);
  EXPECT_LE(after["kernel_bytes"], 40 << 10);
  EXPECT_LT(after["kernel_bytes"], before);
  Result ls = RunPto("cache ls --cache " + cache);
  EXPECT_THAT(ls.output, HasSubstr("2 plan records")) << "plans are never evicted";

  Result missing = RunPto("cache gc --cache " + cache);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.output, HasSubstr("--max-bytes N is required"));
  Result suffix = RunPto("cache gc --max-bytes 12Q --cache " + cache);
  EXPECT_EQ(suffix.exit_code, 2);
  EXPECT_THAT(suffix.output, HasSubstr("unknown suffix in '12Q'"));
}

TEST_F(CacheCli, ExportImportAndMergeRoundTrip) {
  const std::string cache = DemoCache("c");
  {
    std::unique_ptr<cache::CacheStore> store = OpenStore(cache);
    ASSERT_TRUE(store->PutTuning(Tuning("g1", "elementwise", kElementwiseConfig)).ok());
  }
  const int kernels = CountLines(RunPto("cache ls --cache " + cache).output, "transformer_block");
  const std::string n = std::to_string(kernels);
  Result keygen = RunPto("cache keygen --out " + Path("k") + " --comment ci@build");
  ASSERT_EQ(keygen.exit_code, 0) << keygen.output;
  std::smatch id;
  ASSERT_TRUE(std::regex_search(keygen.output, id, std::regex("key (ed25519:[0-9a-f]{16})")))
      << keygen.output;
  const std::string key_id = id[1];
  Result out = RunPto("cache export --with-code --sign " + Path("k") + " --out " +
                      Path("a.bundle") + " --cache " + cache);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_THAT(out.output, HasSubstr(n + " kernel, 2 plan, 1 tuning records"));
  EXPECT_THAT(out.output, HasSubstr("signed with key " + key_id));

  // Into an empty cache trusting the key: every record, and the same bytes back out.
  Result in = RunPto("cache import " + Path("a.bundle") + " --trust-key " + Path("k.pub") +
                     " --cache " + Path("e"));
  ASSERT_EQ(in.exit_code, 0) << in.output;
  EXPECT_THAT(in.output, HasSubstr("signature       " + key_id + " (ci@build), trusted"));
  EXPECT_THAT(in.output, HasSubstr("tuning records  1 accepted, 0 rejected"));
  EXPECT_THAT(in.output, HasSubstr("kernel records  " + n + " stored"));
  ASSERT_EQ(RunPto("cache export --with-code --sign " + Path("k") + " --out " + Path("e.bundle") +
                   " --cache " + Path("e"))
                .exit_code,
            0);
  EXPECT_EQ(ReadFile(Path("e.bundle")), ReadFile(Path("a.bundle")));

  // Without trusting the key: no code, the rest imported.
  in = RunPto("cache import " + Path("a.bundle") + " --cache " + Path("f"));
  ASSERT_EQ(in.exit_code, 0) << in.output;
  EXPECT_THAT(in.output,
              HasSubstr("signature       " + key_id + ", not a trusted key: no object code"));
  EXPECT_THAT(in.output, HasSubstr("kernel records  0 stored, " + n +
                                   " skipped (not trusted: "
                                   "signed by " +
                                   key_id + ", not a --trust-key key)"));
  EXPECT_THAT(RunPto("cache ls --cache " + Path("f")).output,
              HasSubstr("0 kernel records (0 B), 2 plan records, 1 tuning records"));

  // Object code edited and the public content hash recomputed: refused whole, nothing stored,
  // so nothing of it can load. Marked unsigned instead, its code is skipped under --trust-key.
  WriteFile(Path("edited.bundle"), WithEditedCode(ReadFile(Path("a.bundle"))));
  in = RunPto("cache import " + Path("edited.bundle") + " --trust-key " + Path("k.pub") +
              " --cache " + Path("x"));
  EXPECT_EQ(in.exit_code, 1) << in.output;
  EXPECT_THAT(in.output, HasSubstr("pto cache import: '" + Path("edited.bundle") +
                                   "': the bundle's signature does not verify with the key it "
                                   "names (" +
                                   key_id + ") (the bundle was modified or damaged)"));
  EXPECT_THAT(RunPto("cache ls --cache " + Path("x")).output,
              HasSubstr("0 kernel records (0 B), 0 plan records, 0 tuning records"));
  WriteFile(Path("stripped.bundle"), Unsigned(ReadFile(Path("edited.bundle"))));
  in = RunPto("cache import " + Path("stripped.bundle") + " --trust-key " + Path("k.pub") +
              " --cache " + Path("x"));
  ASSERT_EQ(in.exit_code, 0) << in.output;
  EXPECT_THAT(in.output, HasSubstr("signature       none (unsigned)"));
  EXPECT_THAT(in.output, HasSubstr("kernel records  0 stored, " + n +
                                   " skipped (not trusted: "
                                   "unsigned, pass --trust-unsigned-code)"));

  // An unsigned export: its code only with --trust-unsigned-code.
  out = RunPto("cache export --with-code --out " + Path("u.bundle") + " --cache " + cache);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_THAT(out.output, HasSubstr("unsigned: its object code is imported only with "
                                    "--trust-unsigned-code"));
  // A boolean flag takes no value: the bundle after it stays positional.
  in = RunPto("cache import --trust-unsigned-code " + Path("u.bundle") + " --cache " + Path("u"));
  ASSERT_EQ(in.exit_code, 0) << in.output;
  EXPECT_THAT(in.output, HasSubstr("kernel records  " + n + " stored"));

  // Merge into an empty cache: the same records, so the same bundle.
  Result merged = RunPto("cache merge " + cache + " --cache " + Path("m"));
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_THAT(merged.output, HasSubstr("kernel records  " + n + " copied"));
  EXPECT_THAT(merged.output, HasSubstr("tuning records  1 copied"));
  ASSERT_EQ(RunPto("cache export --with-code --sign " + Path("k") + " --out " + Path("m.bundle") +
                   " --cache " + Path("m"))
                .exit_code,
            0);
  EXPECT_EQ(ReadFile(Path("m.bundle")), ReadFile(Path("a.bundle")));
  merged = RunPto("cache merge " + cache + " --cache " + Path("m"));
  EXPECT_THAT(merged.output, HasSubstr("0 copied, " + n + " already present"));
}

// Keys and the trust flags, on records written by the store (no demo needed: every refusal
// here happens before fingerprints matter).
TEST_F(CacheCli, KeysAndTrustFlagsSayWhatIsWrong) {
  Result r = RunPto("cache keygen --out " + Path("a"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("wrote secret key " + Path("a") + " (mode 0600) and public key " +
                                  Path("a.pub") + " (mode 0644)"));
  EXPECT_EQ(ModeOf(Path("a")), 0600u);
  EXPECT_EQ(ModeOf(Path("a.pub")), 0644u);
  r = RunPto("cache keygen --out " + Path("a"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("'" + Path("a") + "' already exists"));
  r = RunPto("cache keygen");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--out NAME is required"));
  ASSERT_EQ(RunPto("cache keygen --out " + Path("b")).exit_code, 0);

  const std::string cache = Path("c");
  {
    std::unique_ptr<cache::CacheStore> store = OpenStore(cache);
    proto::KernelRecord k;
    k.set_symbol("sym_a");
    k.set_object(std::string(300, 'a'));
    k.set_kernel_description("kernel a");
    k.set_codegen_fingerprint("cpu=test;isa=avx2");
    k.set_compiler_fingerprint("pto=test");
    ASSERT_TRUE(store->PutKernel(k).ok());
    ASSERT_TRUE(store->PutTuning(Tuning("g", "elementwise", kElementwiseConfig)).ok());
  }
  ASSERT_EQ(RunPto("cache export --with-code --sign " + Path("a") + " --out " + Path("a.bundle") +
                   " --cache " + cache)
                .exit_code,
            0);

  // The old flag names its replacements.
  r = RunPto("cache import " + Path("a.bundle") + " --trust-code --cache " + Path("d"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("import: --trust-code is gone: pass --trust-key PUBFILE to "
                                  "store object code from bundles signed by that key, or "
                                  "--trust-unsigned-code"));
  EXPECT_FALSE(std::filesystem::exists(Path("d")));

  // Signed by a, trusting b: tuning imported, code not.
  r = RunPto("cache import " + Path("a.bundle") + " --trust-key " + Path("b.pub") + " --cache " +
             Path("d"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("tuning records  1 accepted"));
  EXPECT_THAT(r.output, HasSubstr("kernel records  0 stored, 1 skipped (not trusted: signed by"));
  // Trusting both: the signer is among them (the fingerprints are not this machine's).
  r = RunPto("cache import " + Path("a.bundle") + " --trust-key " + Path("b.pub") +
             " --trust-key " + Path("a.pub") + " --cache " + Path("d"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(", trusted\n"));
  EXPECT_THAT(r.output, HasSubstr("0 stored, 0 skipped (not trusted), 1 skipped (built for other "
                                  "hardware or another compiler)"));

  // A secret key others can read; the public key given to --sign; a key file that is not one.
  ASSERT_EQ(::chmod(Path("b").c_str(), 0640), 0);
  r = RunPto("cache export --sign " + Path("b") + " --out " + Path("x.bundle") + " --cache " +
             cache);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("secret key file '" + Path("b") +
                                  "' has mode 0640: group or "
                                  "others may read or write it; it must be 0600 or stricter"));
  EXPECT_FALSE(std::filesystem::exists(Path("x.bundle")));
  std::filesystem::copy_file(Path("a.pub"), Path("pub-as-secret"));
  ASSERT_EQ(::chmod(Path("pub-as-secret").c_str(), 0600), 0);
  r = RunPto("cache export --sign " + Path("pub-as-secret") + " --out " + Path("x.bundle") +
             " --cache " + cache);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("key file '" + Path("pub-as-secret") +
                                  "': this is a public key file, not a secret one"));
  WriteFile(Path("junk.pub"), "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI\n");
  r = RunPto("cache import " + Path("a.bundle") + " --trust-key " + Path("junk.pub") + " --cache " +
             Path("d"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("key file '" + Path("junk.pub") +
                                  "': expected a line 'pto-ed25519-public-v1 <base64 key>'"));
  r = RunPto("cache import " + Path("a.bundle") + " --cache " + Path("d") + " --trust-key");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("pto cache import: --trust-key: 1 required PUBFILE missing\n"));
  EXPECT_THAT(r.output, HasSubstr("Usage: pto cache import [OPTIONS] [FILE]"));

  // A trusted key inside the cache directory, directly or through a symlink.
  std::filesystem::copy_file(Path("a.pub"), cache + "/a.pub");
  std::filesystem::create_symlink(cache + "/a.pub", Path("link.pub"));
  for (const std::string& key : {cache + "/a.pub", Path("link.pub")}) {
    r = RunPto("cache import " + Path("a.bundle") + " --trust-key " + key + " --cache " + cache);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("trusted key file '" + key +
                                    "' is inside the cache directory '" + cache + "'"));
  }
}

TEST_F(CacheCli, ImportRejectsTuningOutsideItsSpaceWithTheReason) {
  const std::string cache = Path("c");
  {
    std::unique_ptr<cache::CacheStore> store = OpenStore(cache);
    ASSERT_TRUE(store->PutTuning(Tuning("ok", "elementwise", kElementwiseConfig)).ok());
    const std::string odd =
        "tile_rows=4,tile_cols=16384,vector_width=4,unroll=3,streaming_stores=0,prefetch_inputs=0";
    ASSERT_TRUE(store->PutTuning(Tuning("odd", "elementwise", odd)).ok());
    ASSERT_TRUE(store->PutTuning(Tuning("what", "convolution", "tile_rows=4")).ok());
    // mr=8 x nr_vectors=4: 8*4 + 4 + 1 vector registers, more than any x86 CPU has.
    const std::string spill =
        "tile_rows=4,tile_cols=0,vector_width=4,mr=8,nr_vectors=4,unroll=1,kc=0,mc=0,"
        "loop_order=0,pack_b=0,pack_prefetch_rows=0,panel_bytes=0,prefetch_b=0,prefetch_output=0";
    ASSERT_TRUE(store->PutTuning(Tuning("spill", "matmul", spill)).ok());
  }
  ASSERT_EQ(RunPto("cache export --out " + Path("t.bundle") + " --cache " + cache).exit_code, 0);
  Result in = RunPto("cache import " + Path("t.bundle") + " --cache " + Path("d"));
  ASSERT_EQ(in.exit_code, 0) << in.output;
  EXPECT_THAT(in.output, HasSubstr("tuning records  1 accepted, 3 rejected"));
  EXPECT_THAT(in.output, HasSubstr("unknown search space kind 'convolution'"));
  EXPECT_THAT(in.output, HasSubstr("is not a config of the elementwise space"));
  EXPECT_THAT(in.output, HasSubstr("unroll"));
  EXPECT_THAT(in.output, HasSubstr("is outside the matmul space on this machine"));
  EXPECT_THAT(in.output, HasSubstr("register_capacity"));
  EXPECT_THAT(RunPto("cache ls --cache " + Path("d")).output, HasSubstr("1 tuning records"));
}

TEST_F(CacheCli, ErrorsSayWhatIsWrong) {
  Result r = RunPto("cache");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("missing subcommand"));
  r = RunPto("cache frob --cache " + Path("c"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("unknown subcommand 'frob'"));
  r = RunPto("cache export --cache " + Path("c"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("--out FILE is required"));
  r = RunPto("cache ls --colour --cache " + Path("c"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("pto cache ls: unknown flag --colour\n"));
  EXPECT_THAT(r.output, HasSubstr("Usage: pto cache ls [OPTIONS]"));
  r = RunPto("cache ls extra --cache " + Path("c"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("pto cache ls: unexpected argument 'extra'\n"));
  r = RunPto("cache import --cache " + Path("c"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.output, HasSubstr("import: expects a bundle FILE"));
  r = RunPto("cache ls --cache " + Path("nothing"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("no cache directory at '" + Path("nothing") + "'"));
  EXPECT_FALSE(std::filesystem::exists(Path("nothing"))) << "ls must not create a cache";
  r = RunPto("cache import " + Path("missing.bundle") + " --cache " + Path("c"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("cannot read '" + Path("missing.bundle") + "'"));

  // A damaged bundle: the content hash catches it and nothing is imported.
  {
    std::unique_ptr<cache::CacheStore> store = OpenStore(Path("src"));
    ASSERT_TRUE(store->PutTuning(Tuning("g", "elementwise", kElementwiseConfig)).ok());
  }
  ASSERT_EQ(RunPto("cache export --out " + Path("b") + " --cache " + Path("src")).exit_code, 0);
  std::string bytes = ReadFile(Path("b"));
  const size_t at = bytes.find("tile_rows=4");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 10] = '8';
  WriteFile(Path("b"), bytes);
  r = RunPto("cache import " + Path("b") + " --cache " + Path("c"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.output, HasSubstr("content hash mismatch"));
  EXPECT_THAT(RunPto("cache ls --cache " + Path("c")).output, HasSubstr("0 tuning records"));
  EXPECT_THAT(r.output, Not(HasSubstr("imported")));
}

// A cache of `kernels` kernel records (fake object code), one plan and one tuning record.
void FillCache(const std::string& path, int kernels) {
  cache::CacheOptions options;
  options.path = path;
  absl::StatusOr<std::unique_ptr<cache::CacheStore>> store = cache::OpenCache(options);
  ASSERT_TRUE(store.ok() && (*store)->persistent()) << store.status();
  for (int i = 0; i < kernels; ++i) {
    ASSERT_TRUE((*store)->PutKernel(cache::testing::MakeKernel("k" + std::to_string(i))).ok());
  }
  ASSERT_TRUE((*store)->PutPlan(cache::testing::MakePlan("p")).ok());
  ASSERT_TRUE((*store)->PutTuning(Tuning("g", "elementwise", kElementwiseConfig)).ok());
}

// Every path under `root` with a hash of its contents, for "nothing there changed".
std::vector<std::string> Snapshot(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    const size_t hash = e.is_regular_file() ? std::hash<std::string>()(ReadFile(e.path())) : 0;
    out.push_back(e.path().string() + " " + std::to_string(hash));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Changes the owner of `p` and everything under it to `uid`; false if this process may not.
bool ChownTree(const std::string& p, uid_t uid) {
  if (::lchown(p.c_str(), uid, uid) != 0) return false;
  for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
    if (::lchown(e.path().c_str(), uid, uid) != 0) return false;
  }
  return true;
}

constexpr uid_t kNobody = 65534;

TEST_F(CacheCli, ExportWritesNothingThroughAPlantedTemporaryLink) {
  FillCache(Path("c"), 1);
  // Another user plants OUT.tmp, where pto used to write the bundle before renaming it.
  std::ofstream(Path("victim")) << "precious";
  std::filesystem::create_symlink(Path("victim"), Path("out.bundle.tmp"));
  Result r = RunPto("cache export --out " + Path("out.bundle") + " --cache " + Path("c"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(ReadFile(Path("victim")), "precious");
  EXPECT_TRUE(std::filesystem::is_symlink(Path("out.bundle.tmp")));  // left alone
  EXPECT_FALSE(std::filesystem::is_symlink(Path("out.bundle")));
  EXPECT_THAT(ReadFile(Path("out.bundle")), HasSubstr("pto-cache-bundle"));
  struct stat st = {};
  ASSERT_EQ(::stat(Path("out.bundle").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  // Nothing of pto's is left next to it.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) entries += !e.is_directory();
  EXPECT_EQ(entries, 3) << "victim, out.bundle.tmp, out.bundle";
}

TEST_F(CacheCli, MergeFromADirectoryOthersCanWriteTakesDataButNoCode) {
  const std::string src = Path("src");
  FillCache(src, 2);
  ASSERT_EQ(::chmod(src.c_str(), 0777), 0);
  const std::vector<std::string> before = Snapshot(src);
  Result r = RunPto("cache merge " + src + " --cache " + Path("dst"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string why = "'" + src + "' can be written by other users (mode 0777)";
  EXPECT_THAT(r.output, HasSubstr("  kernel records  0 copied, 0 already present, 2 refused (the "
                                  "source is not trusted for code: " +
                                  why + ")\n"));
  EXPECT_THAT(r.output, HasSubstr("  plan records    1 copied, 0 already present\n"));
  EXPECT_THAT(r.output, HasSubstr("  tuning records  1 copied,"));
  EXPECT_EQ(CountLines(r.output, "pto cache: reading '" + src +
                                     "' as data only (nothing is written to it, and no object "
                                     "code is taken from it): " +
                                     why),
            1)
      << r.output;
  EXPECT_EQ(Snapshot(src), before) << "a source others can write is opened read-only";
  EXPECT_THAT(RunPto("cache ls --cache " + Path("dst")).output,
              HasSubstr("0 kernel records (0 B), 1 plan records, 1 tuning records"));
}

TEST_F(CacheCli, MergeFromADirectoryOfAnotherUserTakesDataButNoCode) {
  const std::string src = Path("src");
  FillCache(src, 2);
  if (!ChownTree(src, kNobody)) {
    std::cout << "[ note     ] chown to uid " << kNobody
              << " is not permitted (not root): the owner check is not exercised\n";
    GTEST_SKIP();
  }
  Result r = RunPto("cache merge " + src + " --cache " + Path("dst"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("  kernel records  0 copied, 0 already present, 2 refused (the source is "
                        "not trusted for code: '" +
                        src + "' is owned by another user (uid 65534))\n"));
  EXPECT_THAT(r.output, HasSubstr("  tuning records  1 copied,"));
  EXPECT_THAT(RunPto("cache ls --cache " + Path("dst")).output,
              HasSubstr("0 kernel records (0 B), 1 plan records, 1 tuning records"));
}

TEST_F(CacheCli, ExportWithCodeFromAnUntrustedCacheFails) {
  const std::string c = Path("c");
  FillCache(c, 2);
  ASSERT_EQ(::chmod(c.c_str(), 0777), 0);
  Result r = RunPto("cache export --with-code --out " + Path("a.bundle") + " --cache " + c);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output,
              HasSubstr("pto cache export: object code is never exported from a cache that is "
                        "not trusted for code: '" +
                        c +
                        "' can be written by other users (mode 0777); export without --with-code "
                        "to ship its plan and tuning records\n"));
  EXPECT_FALSE(std::filesystem::exists(Path("a.bundle")));
  // Its plain data may still be shipped.
  r = RunPto("cache export --out " + Path("a.bundle") + " --cache " + c);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("0 kernel, 1 plan, 1 tuning records"));
}

TEST_F(CacheCli, CommandsRefuseADirectoryTheyCannotTrust) {
  const std::string c = Path("c");
  FillCache(c, 1);
  std::filesystem::remove(c + "/LOCK");
  std::filesystem::create_symlink(Path("victim"), c + "/LOCK");
  Result r = RunPto("cache ls --cache " + c);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("pto cache ls: '" + c +
                                  "/LOCK' is a symbolic link, and pto never follows links in "
                                  "a cache directory\n"));
  EXPECT_FALSE(std::filesystem::exists(Path("victim")));

  std::filesystem::remove(c + "/LOCK");
  ASSERT_EQ(::chmod(c.c_str(), 0777), 0);
  r = RunPto("cache gc --max-bytes 0 --cache " + c);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("pto cache gc: '" + c +
                                  "' can be written by other users (mode 0777), and pto writes "
                                  "only to a cache directory that no other user can change\n"));
  // Reading commands still show its data.
  r = RunPto("cache ls --cache " + c);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("1 kernel records"));
}

// The probe's attack: the owner's cache directory is 0755 but its inbox/ and readers/ are
// world-writable; another user imports a bundle with code. Before, that user's process handed
// the code over through the inbox and the owner's writer ingested it.
TEST_F(CacheCli, ImportByAnotherUserThroughAWritableInboxIsRefused) {
  const std::string c = Path("c");
  FillCache(Path("src"), 1);
  ASSERT_EQ(
      RunPto("cache export --with-code --out " + Path("b") + " --cache " + Path("src")).exit_code,
      0);
  ASSERT_EQ(::chmod(Path("b").c_str(), 0644), 0);
  cache::CacheOptions options;
  options.path = c;
  options.maintenance_interval_ms = 60000;
  absl::StatusOr<std::unique_ptr<cache::CacheStore>> owner = cache::OpenCache(options);
  ASSERT_TRUE(owner.ok());
  ASSERT_EQ((*owner)->Role(), "writer");
  for (const char* sub : {"/inbox", "/readers"}) {
    std::filesystem::create_directories(c + sub);
    ASSERT_EQ(::chmod((c + sub).c_str(), 0777), 0);
  }
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups";
  if (::geteuid() != 0 || RunPto("--help", as_nobody).exit_code != 0) {
    std::cout << "[ note     ] cannot run pto as uid 65534 (needs root and setpriv): the "
                 "cross-user import is not exercised\n";
    GTEST_SKIP();
  }
  // The importer's files would name a kernel under this machine's fingerprints only if they
  // came from this machine; the records here are test records, so the plan and tuning records
  // are what would be handed over.
  Result r = RunPto("cache import " + Path("b") + " --trust-unsigned-code --cache " + c, as_nobody);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("pto cache import: '" + c +
                                  "/inbox' can be written by other users (mode 0777), and pto "
                                  "writes only to a cache directory that no other user can "
                                  "change\n"));
  dynamic_cast<cache::SharedStore&>(**owner).Maintain();
  int64_t records = 0;
  for (const cache::RecordKind kind : {cache::RecordKind::kPlan, cache::RecordKind::kTuning}) {
    ASSERT_TRUE((*owner)->Scan(kind, [&](const cache::ScannedRecord&) { ++records; }).ok());
  }
  EXPECT_EQ(records, 0) << "nothing of the other user's was ingested";
}

}  // namespace
}  // namespace pto
