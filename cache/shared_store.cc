#include "cache/shared_store.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "cache/trust.h"

namespace pto::cache {
namespace {

void Warn(const CacheOptions& options, const std::string& message) {
  if (options.log) options.log(kLogWarning, message);
}

std::string CodeUntrustedWarning(const std::string& dir, const std::string& why) {
  return absl::StrCat("pto cache: object code from '", dir, "' will not be loaded: ", why,
                      "; kernels are compiled instead, tuning and plan records are still used");
}

CacheStats Minus(const CacheStats& a, const CacheStats& b) {
  CacheStats d;
  d.hits = a.hits - b.hits;
  d.misses = a.misses - b.misses;
  d.corrupt = a.corrupt - b.corrupt;
  d.puts = a.puts - b.puts;
  d.kernel_puts = a.kernel_puts - b.kernel_puts;
  return d;
}

}  // namespace

SharedStore::SharedStore(const CacheOptions& options, std::unique_ptr<RocksDbStore> db,
                         std::unique_ptr<RocksDbStore> base, std::string why_code_untrusted)
    : CacheStore(options.clock_ms),
      options_(options),
      why_code_untrusted_(std::move(why_code_untrusted)),
      base_(std::move(base)),
      db_(std::move(db)) {
  maintenance_ = std::thread([this] { MaintenanceLoop(); });
}

absl::StatusOr<std::unique_ptr<SharedStore>> SharedStore::Open(const CacheOptions& options,
                                                               UnsafeDirectory unsafe) {
  absl::StatusOr<DirectoryTrust> trust = CheckCacheDirectory(options.path);
  if (!trust.ok()) return trust.status();
  if (!trust->writable && unsafe == UnsafeDirectory::kRefuse) return RefuseToWrite(*trust);
  absl::StatusOr<std::unique_ptr<RocksDbStore>> db =
      trust->writable ? RocksDbStore::OpenWriterOrReader(options)
                      : RocksDbStore::Open(options, DbRole::kReadOnly);
  if (!db.ok()) return db.status();
  std::string why_code_untrusted;
  if (!trust->writable) {
    why_code_untrusted = trust->why_not_code;
    Warn(options, absl::StrCat("pto cache: reading '", options.path,
                               "' as data only (nothing is written to it, and no object code is "
                               "taken from it): ",
                               trust->why_not_writable));
  } else if (!trust->code) {
    why_code_untrusted = trust->why_not_code;
    Warn(options, CodeUntrustedWarning(options.path, trust->why_not_code));
  }

  std::unique_ptr<RocksDbStore> base;
  if (!options.base_path.empty()) {
    CacheOptions base_options = options;
    base_options.path = options.base_path;
    absl::StatusOr<DirectoryTrust> base_trust = CheckCacheDirectory(options.base_path);
    absl::StatusOr<std::unique_ptr<RocksDbStore>> opened =
        base_trust.ok() ? RocksDbStore::Open(base_options, DbRole::kReadOnly)
                        : absl::StatusOr<std::unique_ptr<RocksDbStore>>(base_trust.status());
    if (opened.ok()) {
      base = std::move(*opened);
      if (!base_trust->code) {
        if (why_code_untrusted.empty()) why_code_untrusted = base_trust->why_not_code;
        Warn(options, CodeUntrustedWarning(options.base_path, base_trust->why_not_code));
      }
    } else {
      Warn(options, absl::StrCat("pto cache: cannot use the base cache at '", options.base_path,
                                 "': ", opened.status().message(), "; continuing without it"));
    }
  }
  return std::unique_ptr<SharedStore>(
      new SharedStore(options, std::move(*db), std::move(base), std::move(why_code_untrusted)));
}

SharedStore::~SharedStore() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  maintenance_.join();
  FlushCounters();
  if (db_->role() == DbRole::kReader) (void)db_->FlushPendingUsage();
  db_.reset();
}

void SharedStore::MaintenanceLoop() {
  const auto interval = std::chrono::milliseconds(std::max(1, options_.maintenance_interval_ms));
  std::unique_lock<std::mutex> lock(stop_mu_);
  while (!stop_cv_.wait_for(lock, interval, [this] { return stop_; })) {
    lock.unlock();
    Maintain();
    lock.lock();
  }
}

void SharedStore::Maintain() {
  DbRole role;
  {
    std::shared_lock<std::shared_mutex> lock(role_mu_);
    role = db_->role();
  }
  if (role == DbRole::kReader) {
    // The writer may have gone: take the role over. Our own batches are in the inbox, which
    // the new writer ingests as it opens.
    if (std::unique_ptr<RocksDbStore> writer = RocksDbStore::TakeOverWriterRole(options_)) {
      std::unique_ptr<RocksDbStore> old;
      {
        std::unique_lock<std::shared_mutex> lock(role_mu_);
        (void)db_->FlushPendingUsage();
        old = std::move(db_);
        db_ = std::move(writer);
      }
      old.reset();
      (void)db_->IngestInbox();  // what the old reader handed over last
      if (options_.log) {
        options_.log(kLogInfo,
                     absl::StrCat("pto cache: took over the writer role of '", options_.path, "'"));
      }
    }
  }
  {
    std::shared_lock<std::shared_mutex> lock(role_mu_);
    db_->DoRoleChores();
  }
  FlushCounters();
}

void SharedStore::FlushCounters() {
  std::lock_guard<std::mutex> counters(counters_mu_);
  const CacheStats now = stats();
  const CacheStats delta = Minus(now, flushed_);
  if (delta.hits == 0 && delta.misses == 0 && delta.corrupt == 0 && delta.puts == 0 &&
      delta.kernel_puts == 0) {
    return;
  }
  std::shared_lock<std::shared_mutex> lock(role_mu_);
  if (db_->AddCounters(delta).ok()) flushed_ = now;
}

CacheStats SharedStore::TotalStats() {
  FlushCounters();
  CacheStats s = stats();
  absl::StatusOr<CacheStats> shared;
  {
    std::shared_lock<std::shared_mutex> lock(role_mu_);
    shared = db_->ReadCounters();
  }
  if (!shared.ok()) return s;
  CacheStats unflushed;
  {
    std::lock_guard<std::mutex> counters(counters_mu_);
    unflushed = Minus(s, flushed_);
  }
  s.hits = shared->hits + unflushed.hits;
  s.misses = shared->misses + unflushed.misses;
  s.corrupt = shared->corrupt + unflushed.corrupt;
  s.puts = shared->puts + unflushed.puts;
  s.kernel_puts = shared->kernel_puts + unflushed.kernel_puts;
  return s;
}

bool SharedStore::persistent() const {
  std::shared_lock<std::shared_mutex> lock(role_mu_);
  return db_->persistent();
}

std::string SharedStore::Describe() const {
  std::shared_lock<std::shared_mutex> lock(role_mu_);
  std::string d = db_->Describe();
  if (base_) absl::StrAppend(&d, " over base ", base_->Describe());
  return d;
}

std::string SharedStore::Role() const {
  std::shared_lock<std::shared_mutex> lock(role_mu_);
  return db_->Role();
}

absl::StatusOr<int64_t> SharedStore::EvictTo(int64_t kernel_bytes) {
  std::shared_lock<std::shared_mutex> lock(role_mu_);
  return db_->EvictTo(kernel_bytes);
}

absl::StatusOr<CacheStore::Loaded> SharedStore::Load(RecordKind kind, const std::string& key) {
  std::shared_lock<std::shared_mutex> lock(role_mu_);
  absl::StatusOr<Loaded> loaded = LoadFrom(*db_, kind, key);
  if (base_ && loaded.ok() && loaded->state == Loaded::State::kMiss) {
    return LoadFrom(*base_, kind, key);
  }
  return loaded;
}

absl::Status SharedStore::Store(RecordKind kind, const std::string& key, std::string payload) {
  std::shared_lock<std::shared_mutex> lock(role_mu_);
  return StoreIn(*db_, kind, key, std::move(payload));
}

absl::Status SharedStore::Erase(RecordKind kind, const std::string& key) {
  std::shared_lock<std::shared_mutex> lock(role_mu_);
  return EraseFrom(*db_, kind, key);
}

CacheStore::StoreCounts SharedStore::Counts() const {
  std::shared_lock<std::shared_mutex> lock(role_mu_);
  StoreCounts c = CountsOf(*db_);
  if (base_) {
    const StoreCounts b = CountsOf(*base_);
    c.entries += b.entries;
    c.bytes += b.bytes;
  }
  return c;
}

absl::Status SharedStore::ScanRaw(RecordKind kind, const std::function<void(ScannedRecord&)>& fn) {
  std::shared_lock<std::shared_mutex> lock(role_mu_);
  absl::flat_hash_set<std::string> seen;
  absl::Status s = ScanRawOf(*db_, kind, [&](ScannedRecord& r) {
    seen.insert(r.key);
    fn(r);
  });
  if (!s.ok() || !base_) return s;
  return ScanRawOf(*base_, kind, [&](ScannedRecord& r) {
    if (seen.contains(r.key)) return;
    r.from_base = true;
    fn(r);
  });
}

}  // namespace pto::cache
