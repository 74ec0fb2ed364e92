#include "tests/cache/cache_test_util.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "cache/rocksdb_store.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace pto::cache::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  const char* base = getenv("TMPDIR");
  std::string tmpl =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/pto_cache_test.XXXXXX";
  char* made = mkdtemp(tmpl.data());
  EXPECT_NE(made, nullptr) << "mkdtemp " << tmpl;
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) chmod(it->path().c_str(), 0755);
  }
  chmod(path_.c_str(), 0755);
  fs::remove_all(path_, ec);
}

std::unique_ptr<CacheStore> OpenWithoutMaintenance(const std::string& path, const std::string& base,
                                                   LogCapture& log) {
  CacheOptions options;
  options.path = path;
  options.base_path = base;
  options.log = log.Sink();
  options.maintenance_interval_ms = 60000;
  absl::StatusOr<std::unique_ptr<CacheStore>> store = OpenCache(options);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xff);
  return out;
}

namespace {
uint32_t SeedOf(const std::string& name) {
  uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return h;
}
}  // namespace

KernelKeyParts KernelParts(const std::string& name) {
  return {"kernel " + name + " f32[64,128] tile=8x32 u4", "znver5+avx512f+avx512bw",
          CompilerFingerprint(1, "19.1.7", "O2")};
}

proto::KernelRecord MakeKernel(const std::string& name, size_t object_size) {
  const KernelKeyParts parts = KernelParts(name);
  proto::KernelRecord r;
  r.set_symbol("f32_" + name + "_8x32_u4_avx512");
  r.set_object(RandomBytes(object_size, SeedOf(name)));
  r.set_kernel_description(parts.kernel_description);
  r.set_codegen_fingerprint(parts.codegen_fingerprint);
  r.set_compiler_fingerprint(parts.compiler_fingerprint);
  r.set_compile_seconds(0.061);
  r.set_created_unix_ms(1700000000000);
  return r;
}

TuningKeyParts TuningParts(const std::string& name) {
  return {"g-" + name, "batch:[1,64]", "f32", "AuthenticAMD/26/68 l2=1M l3share=16M t=2", 3};
}

proto::TuningRecord MakeTuning(const std::string& name, size_t config_size) {
  const TuningKeyParts parts = TuningParts(name);
  proto::TuningRecord r;
  r.set_fusion_group_hash(parts.fusion_group_hash);
  r.set_bucket(parts.bucket);
  r.set_dtype(parts.dtype);
  r.set_performance_fingerprint(parts.performance_fingerprint);
  r.set_search_space_version(parts.search_space_version);
  r.set_config(RandomBytes(config_size, SeedOf(name) + 1));
  r.set_best_seconds(1.5e-4);
  r.set_default_seconds(4.0e-4);
  r.set_found_by("evolutionary seed=7 trials=200");
  return r;
}

PlanKeyParts PlanParts(const std::string& name) { return {"graph-" + name, "b=[1,64]%8"}; }

proto::PlanRecord MakePlan(const std::string& name) {
  const PlanKeyParts parts = PlanParts(name);
  proto::PlanRecord r;
  r.set_graph_hash(parts.graph_hash);
  r.set_shape_class(parts.shape_class);
  r.add_kernel_keys(KernelKey(KernelParts(name + "-a")));
  r.add_kernel_keys(KernelKey(KernelParts(name + "-b")));
  return r;
}

proto::KernelRecord WithoutUsage(proto::KernelRecord record) {
  record.clear_last_used_unix_ms();
  record.clear_hits();
  record.clear_schema_version();
  return record;
}

bool SameMessage(const google::protobuf::Message& a, const google::protobuf::Message& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

std::function<void(int, std::string_view)> LogCapture::Sink() {
  return [this](int level, std::string_view message) {
    std::lock_guard<std::mutex> lock(mu_);
    messages_.emplace_back(level, std::string(message));
  };
}

std::vector<std::string> LogCapture::AtLeast(int level) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [l, m] : messages_) {
    if (l >= level) out.push_back(m);
  }
  return out;
}

std::string LogCapture::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [l, m] : messages_) out += "[" + std::to_string(l) + "] " + m + "\n";
  return out;
}

void LogCapture::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  messages_.clear();
}

std::vector<fs::path> FilesMatching(const fs::path& dir, std::string_view prefix,
                                    std::string_view suffix) {
  std::vector<fs::path> out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.starts_with(prefix) && name.ends_with(suffix)) {
      out.push_back(e.path());
    }
  }
  return out;
}

std::string ReadFile(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const fs::path& file, std::string_view bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void RawPut(const std::string& db_path, const std::string& family, const std::string& key,
            const std::string& value) {
  rocksdb::DBOptions options;
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(options, db_path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const std::string& name : names) families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, db_path, families, &handles, &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == family) {
      s = db->Put(rocksdb::WriteOptions(), handles[i], key, value);
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
  }
  for (rocksdb::ColumnFamilyHandle* h : handles) db->DestroyColumnFamilyHandle(h);
  EXPECT_TRUE(db->Close().ok());
  delete db;
}

fs::path LargestSstOf(const std::string& db_path, const std::string& family) {
  rocksdb::DBOptions options;
  std::vector<std::string> names;
  if (!rocksdb::DB::ListColumnFamilies(options, db_path, &names).ok()) return {};
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  for (const std::string& name : names) families.emplace_back(name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  if (!rocksdb::DB::OpenForReadOnly(options, db_path, families, &handles, &db).ok()) return {};
  std::vector<rocksdb::LiveFileMetaData> files;
  db->GetLiveFilesMetaData(&files);
  fs::path largest;
  uint64_t size = 0;
  for (const rocksdb::LiveFileMetaData& f : files) {
    if (f.column_family_name == family && f.size > size) {
      size = f.size;
      largest = fs::path(db_path) / fs::path(f.relative_filename).filename();
    }
  }
  for (rocksdb::ColumnFamilyHandle* h : handles) db->DestroyColumnFamilyHandle(h);
  db->Close().PermitUncheckedError();
  delete db;
  return largest;
}

fs::path SstContaining(const fs::path& dir, std::string_view needle) {
  for (const fs::path& f : FilesMatching(dir, "", ".sst")) {
    if (ReadFile(f).find(needle) != std::string::npos) return f;
  }
  return {};
}

namespace {

std::string RandomHex(size_t n, uint32_t seed) {
  std::string out = RandomBytes(n, seed);
  for (char& c : out) c = "0123456789abcdef"[static_cast<uint8_t>(c) & 15];
  return out;
}

proto::KernelRecord FamilyKernel(int i) {
  return MakeKernel(RecordName(RecordKind::kKernel, i), 1024);
}
proto::PlanRecord FamilyPlan(int i) {
  proto::PlanRecord r = MakePlan(RecordName(RecordKind::kPlan, i));
  r.add_kernel_keys(RandomHex(160, 7000 + i));
  return r;
}
proto::TuningRecord FamilyTuning(int i) {
  return MakeTuning(RecordName(RecordKind::kTuning, i), 96);
}

}  // namespace

std::string RecordName(RecordKind kind, int i) {
  return std::string(RecordKindName(kind)) + "-" + std::to_string(i);
}

std::string RecordPayload(RecordKind kind, int i) {
  proto::KernelRecord kernel;
  switch (kind) {
    case RecordKind::kKernel:
      kernel = FamilyKernel(i);
      kernel.set_schema_version(kSchemaVersion);
      return kernel.SerializeAsString();
    case RecordKind::kPlan: {
      proto::PlanRecord plan = FamilyPlan(i);
      plan.set_schema_version(kSchemaVersion);
      return plan.SerializeAsString();
    }
    case RecordKind::kTuning:
      break;
  }
  proto::TuningRecord tuning = FamilyTuning(i);
  tuning.set_schema_version(kSchemaVersion);
  return tuning.SerializeAsString();
}

std::string RecordNeedle(RecordKind kind, int i) {
  switch (kind) {
    case RecordKind::kKernel:
      return FamilyKernel(i).object().substr(256, 64);
    case RecordKind::kPlan:
      return FamilyPlan(i).kernel_keys(2).substr(40, 64);
    case RecordKind::kTuning:
      break;
  }
  return FamilyTuning(i).config().substr(16, 64);
}

void FillFamilyAndCompact(const std::string& db_path, RecordKind kind, int count) {
  CacheOptions options;
  options.path = db_path;
  absl::StatusOr<std::unique_ptr<RocksDbStore>> store = RocksDbStore::Open(options);
  ASSERT_TRUE(store.ok()) << store.status();
  for (int i = 0; i < count; ++i) {
    absl::Status s = kind == RecordKind::kKernel ? (*store)->PutKernel(FamilyKernel(i))
                     : kind == RecordKind::kPlan ? (*store)->PutPlan(FamilyPlan(i))
                                                 : (*store)->PutTuning(FamilyTuning(i));
    ASSERT_TRUE(s.ok()) << s;
  }
  ASSERT_TRUE((*store)->Flush().ok());
  ASSERT_TRUE((*store)->CompactAll().ok());
}

fs::path DamageSstAt(const fs::path& dir, std::string_view needle) {
  const fs::path sst = SstContaining(dir, needle);
  if (sst.empty()) return sst;
  std::string bytes = ReadFile(sst);
  bytes[bytes.find(needle) + needle.size() / 2] ^= 0x5a;
  WriteFile(sst, bytes);
  return sst;
}

std::string ReadRecord(CacheStore& store, RecordKind kind, int i) {
  const std::string name = RecordName(kind, i);
  switch (kind) {
    case RecordKind::kKernel: {
      auto r = store.GetKernel(KernelParts(name));
      if (!r.ok() || !r->has_value()) return "";
      proto::KernelRecord record = **r;
      record.clear_last_used_unix_ms();
      record.clear_hits();
      return record.SerializeAsString();
    }
    case RecordKind::kPlan: {
      auto r = store.GetPlan(PlanParts(name));
      return r.ok() && r->has_value() ? (*r)->SerializeAsString() : "";
    }
    case RecordKind::kTuning:
      break;
  }
  auto r = store.GetTuning(TuningParts(name));
  return r.ok() && r->has_value() ? (*r)->SerializeAsString() : "";
}

int CountIntactRecords(CacheStore& store, RecordKind kind, int count) {
  int hits = 0;
  for (int i = 0; i < count; ++i) {
    const std::string read = ReadRecord(store, kind, i);
    if (read.empty()) continue;
    ++hits;
    EXPECT_EQ(read, RecordPayload(kind, i)) << RecordName(kind, i);
  }
  return hits;
}

}  // namespace pto::cache::testing
