// The roles of a RocksDbStore on a database that several processes share (docs/cache.md,
// "Several processes"): which process is the writer, how the others register as readers, and
// what each role does.
//
// Choosing: OpenWriterOrReader is the entry point. The writer role is free when this process
// does not hold it already (the registry below) and no other process holds RocksDB's LOCK
// file; a reader whose writer has gone takes the role over with TakeOverWriterRole.
// Registering: a writer enters its path in this process's registry before RocksDB takes the
// LOCK (ClaimWriterRole); a reader makes a directory of its own under readers/ for its
// secondary instance's info log (MakeReaderDir); both are undone when the store closes.
// Working: the writer ingests the inbox (at open and each round) and removes what killed
// processes left; a reader catches up with the writer and hands its writes over through the
// inbox. Both add their counts to the shared counters.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "cache/add_operator.h"
#include "cache/inbox.h"
#include "cache/reader_dirs.h"
#include "cache/rocksdb_options.h"
#include "cache/rocksdb_store.h"
#include "cache/rocksdb_store_internal.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"

namespace pto::cache {
namespace {

namespace fs = std::filesystem;

constexpr char kCounterPrefix[] = "count/";
constexpr const char* kCounterNames[] = {"hits", "misses", "corrupt", "puts", "compiles"};
constexpr int kCounters = 5;

// Paths this process holds as writer: RocksDB refuses a second open of a path in one process,
// and each failed DB::Open rotates the holder's info log, so callers check here first.
std::mutex& WritersMutex() {
  static std::mutex mu;
  return mu;
}
absl::flat_hash_set<std::string>& WriterPaths() {
  static auto* paths = new absl::flat_hash_set<std::string>();
  return *paths;
}
std::string CanonicalPath(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

bool WriterOpenInThisProcess(const std::string& path) {
  std::lock_guard<std::mutex> lock(WritersMutex());
  return WriterPaths().contains(CanonicalPath(path));
}

// Whether another process holds RocksDB's LOCK on `path` (checked without taking it: a
// failed DB::Open would rotate the holder's info log). False when there is no LOCK yet.
// Never call it in a process that holds the LOCK (WriterOpenInThisProcess): POSIX drops all
// of a process's fcntl locks on a file when it closes any descriptor of that file.
bool LockedByAnotherProcess(const std::string& path) {
  const std::string lock_file = (fs::path(path) / "LOCK").string();
  const int fd = ::open(lock_file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock probe = {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  const bool held = ::fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
  ::close(fd);
  return held;
}

// Whether no process holds the writer role of `path`. This process's own registry is asked
// first: probing the LOCK file in the process that holds it would release RocksDB's lock.
bool WriterRoleFree(const std::string& path) {
  return !WriterOpenInThisProcess(path) && !LockedByAnotherProcess(path);
}

int64_t* CounterField(CacheStats& s, int i) {
  int64_t* fields[] = {&s.hits, &s.misses, &s.corrupt, &s.puts, &s.kernel_puts};
  return fields[i];
}

}  // namespace

// --- Choosing a role ---

absl::StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::OpenWriterOrReader(
    const CacheOptions& options) {
  // Processes that start together race: the loser of the LOCK may find the database not
  // created yet, so a reader open is retried.
  // A failed writer open is a lost race when the role is taken afterwards (by another process
  // or another store of this one): then this store becomes a reader. When the role is still
  // free, the failure is the database's own, unless the holder exited in between: one retry.
  absl::Status last = absl::OkStatus();
  bool retried_free_role = false;
  for (int attempt = 0; attempt < 40; ++attempt) {
    if (WriterRoleFree(options.path)) {
      absl::StatusOr<std::unique_ptr<RocksDbStore>> writer = Open(options, DbRole::kWriter);
      if (writer.ok()) return writer;
      if (WriterRoleFree(options.path)) {
        if (retried_free_role) return writer;
        retried_free_role = true;
        continue;
      }
    }
    absl::StatusOr<std::unique_ptr<RocksDbStore>> reader = Open(options, DbRole::kReader);
    if (reader.ok()) return reader;
    last = reader.status();
    if (last.code() == absl::StatusCode::kFailedPrecondition) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return last;
}

std::unique_ptr<RocksDbStore> RocksDbStore::TakeOverWriterRole(const CacheOptions& options) {
  if (!WriterRoleFree(options.path)) return nullptr;
  absl::StatusOr<std::unique_ptr<RocksDbStore>> writer = Open(options, DbRole::kWriter);
  if (!writer.ok()) return nullptr;
  return std::move(*writer);
}

std::string RocksDbStore::Role() const {
  switch (role_) {
    case DbRole::kWriter:
      return "writer";
    case DbRole::kReader:
      return "reader";
    case DbRole::kReadOnly:
      break;
  }
  return "read-only";
}

// --- Registering and unregistering ---

absl::Status RocksDbStore::ClaimWriterRole() {
  // Registered before RocksDB takes the LOCK: from then on no thread of this process may
  // probe the LOCK file (closing any descriptor of it would drop this process's fcntl lock).
  std::lock_guard<std::mutex> lock(WritersMutex());
  if (!WriterPaths().insert(CanonicalPath(path_)).second) {
    return absl::UnavailableError(absl::StrCat("cannot open the RocksDB database (", path_,
                                               "): its lock is held by this process"));
  }
  registered_writer_ = true;
  return absl::OkStatus();
}

absl::Status RocksDbStore::MakeReaderDir() {
  absl::StatusOr<std::string> dir = reader_dirs::Make(path_);
  if (!dir.ok()) return dir.status();
  secondary_path_ = *dir;
  return absl::OkStatus();
}

void RocksDbStore::ReleaseRole() {
  if (registered_writer_) {
    std::lock_guard<std::mutex> lock(WritersMutex());
    WriterPaths().erase(CanonicalPath(path_));
  }
  if (!secondary_path_.empty()) reader_dirs::Remove(path_, secondary_path_);
}

// --- The writer ---

void RocksDbStore::StartWriterRole() {
  // Batches left by readers (also by readers that have exited) are ingested at once.
  inbox::RemoveAbandonedTemporaries(path_);
  if (absl::StatusOr<int> n = IngestInbox(); !n.ok()) {
    Log(kLogWarning, std::string(n.status().message()));
  }
}

void RocksDbStore::DoRoleChores() {
  if (role_ == DbRole::kWriter) {
    if (absl::StatusOr<int> n = IngestInbox(); !n.ok()) {
      Log(kLogDebug, std::string(n.status().message()));
    }
    reader_dirs::RemoveAbandoned(path_);
  } else {
    (void)CatchUp();
    (void)FlushPendingUsage();
  }
}

absl::StatusOr<int> RocksDbStore::IngestInbox() {
  if (role_ != DbRole::kWriter) {
    return absl::FailedPreconditionError("only the writer ingests the inbox");
  }
  if (degraded_.load()) return 0;
  SetAsideRefusedBatches();
  int ingested = 0;
  for (const inbox::Pending& batch : inbox::List(path_)) {
    std::vector<rocksdb::IngestExternalFileArg> args;
    for (const auto& [family, file] : batch.files) {
      rocksdb::ColumnFamilyHandle* handle = nullptr;
      for (rocksdb::ColumnFamilyHandle* h : handles_) {
        if (h->GetName() == family) handle = h;
      }
      if (handle == nullptr) continue;  // a family this version does not know
      rocksdb::IngestExternalFileArg arg;
      arg.column_family = handle;
      arg.external_files = {file};
      arg.options.move_files = true;           // a hard link, no copy
      arg.options.write_global_seqno = false;  // the MANIFEST records it; the file is unchanged
      arg.options.verify_checksums_before_ingest = true;
      args.push_back(std::move(arg));
    }
    rocksdb::Status s = args.empty() ? rocksdb::Status::OK() : db_->IngestExternalFiles(args);
    if (s.ok()) {
      inbox::Remove(batch);
      ++ingested;
      continue;
    }
    if (s.IsCorruption() || s.IsInvalidArgument()) {
      Log(kLogWarning, absl::StrCat("pto cache: dropped the unusable inbox batch ", batch.dir, ": ",
                                    s.ToString()));
      inbox::Remove(batch);
      continue;
    }
    // Anything else (e.g. a full disk) is retried later; the batch stays.
    return FromRocks(s, absl::StrCat("cannot ingest the inbox batch ", batch.dir), path_);
  }
  if (ingested > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    if (absl::Status st = LoadIndex(/*full_scan=*/false); !st.ok()) return st;
    if (absl::Status st = EvictLocked(lru_.Victims(capacity_bytes_)); !st.ok()) return st;
  }
  return ingested;
}

void RocksDbStore::SetAsideRefusedBatches() {
  const inbox::Refusals refusals = inbox::SetAsideUnsafe(path_);
  for (const std::string& batch : refusals.batches) Log(kLogWarning, "pto cache: " + batch);
  bool new_refusal = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    new_refusal = !refusals.inbox.empty() && refusals.inbox != inbox_refusal_;
    inbox_refusal_ = refusals.inbox;
  }
  if (new_refusal) Log(kLogWarning, "pto cache: " + refusals.inbox);  // once, not every round
}

absl::Status RocksDbStore::Flush() {
  if (role_ != DbRole::kWriter) return absl::OkStatus();
  rocksdb::FlushOptions options;
  options.wait = true;
  rocksdb::Status s = db_->Flush(options, handles_);
  if (!s.ok()) return FromRocks(s, "flush failed", path_);
  return absl::OkStatus();
}

absl::Status RocksDbStore::CompactAll() {
  if (role_ != DbRole::kWriter) return absl::OkStatus();
  for (rocksdb::ColumnFamilyHandle* h : handles_) {
    rocksdb::Status s = db_->CompactRange(rocksdb::CompactRangeOptions(), h, nullptr, nullptr);
    if (!s.ok()) return FromRocks(s, "compaction failed", path_);
  }
  return absl::OkStatus();
}

// --- A reader ---

absl::Status RocksDbStore::TryCatchUp() {
  if (role_ != DbRole::kReader) return absl::OkStatus();
  std::lock_guard<std::mutex> catch_up(catch_up_mu_);
  rocksdb::Status s = db_->TryCatchUpWithPrimary();
  if (!s.ok()) return FromRocks(s, "cannot catch up with the cache's writer", path_);
  return absl::OkStatus();
}

absl::Status RocksDbStore::CatchUp() {
  if (role_ != DbRole::kReader) return absl::OkStatus();
  if (absl::Status s = TryCatchUp(); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  return LoadIndex(/*full_scan=*/false);
}

absl::Status RocksDbStore::FlushPendingUsage() {
  if (role_ != DbRole::kReader || degraded_.load()) return absl::OkStatus();
  inbox::Batch batch;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_usage_.empty()) return absl::OkStatus();
    for (const auto& [key, usage] : pending_usage_) {
      batch[kMetaFamily].push_back({inbox::Entry::Op::kPut, UsageKey(key), EncodeUsage(usage)});
    }
    pending_usage_.clear();
  }
  return HandOver(batch);
}

absl::Status RocksDbStore::HandOver(const inbox::Batch& batch) {
  absl::Status s = inbox::WriteBatch(path_, batch, *table_options_);
  if (!s.ok()) Degrade(s);
  return s;
}

// --- The shared counters ---

absl::Status RocksDbStore::AddCounters(const CacheStats& delta) {
  if (role_ == DbRole::kReadOnly || degraded_.load()) return absl::OkStatus();
  CacheStats d = delta;
  inbox::Batch batch;
  rocksdb::WriteBatch write;
  for (int i = 0; i < kCounters; ++i) {
    const int64_t v = *CounterField(d, i);
    if (v == 0) continue;
    const std::string key = absl::StrCat(kCounterPrefix, kCounterNames[i]);
    batch[kMetaFamily].push_back({inbox::Entry::Op::kMerge, key, EncodeInt64(v)});
    write.Merge(meta_, key, EncodeInt64(v));
  }
  if (write.Count() == 0) return absl::OkStatus();
  if (role_ == DbRole::kReader) return HandOver(batch);
  rocksdb::Status s = db_->Write(WriteOpts(), &write);
  if (!s.ok()) return FromRocks(s, "cannot update the cache's counters", path_);
  return absl::OkStatus();
}

absl::StatusOr<CacheStats> RocksDbStore::ReadCounters() {
  if (role_ == DbRole::kReader) (void)TryCatchUp();
  CacheStats totals;
  for (int i = 0; i < kCounters; ++i) {
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), meta_,
                                 absl::StrCat(kCounterPrefix, kCounterNames[i]), &value);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return FromRocks(s, "cannot read the cache's counters", path_);
    *CounterField(totals, i) = DecodeInt64(value);
  }
  return totals;
}

}  // namespace pto::cache
