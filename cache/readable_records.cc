#include "cache/readable_records.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/db.h"

namespace pto::cache {
namespace {

using absl::uint128;

constexpr int kDigits = 32;
// Damaged probes in a row after which the probe spacing doubles.
constexpr int kProbesPerWidening = 8;
// Probes per record: the initial spacing is this fraction of the average gap between records.
constexpr uint64_t kProbesPerRecord = 8;
// The record count assumed when none is given.
constexpr int64_t kDefaultExpectedRecords = 64;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The keys prefix + 32 lowercase hex digits, numbered by their digits: key order is number
// order, since '0'..'9' sort before 'a'..'f'.
class KeySpace {
 public:
  explicit KeySpace(std::string prefix) : prefix_(std::move(prefix)) {}

  std::string KeyAt(uint128 x) const {
    std::string key = prefix_;
    key.resize(prefix_.size() + kDigits);
    for (int i = kDigits - 1; i >= 0; --i) {
      key[prefix_.size() + i] = "0123456789abcdef"[static_cast<int>(absl::Uint128Low64(x) & 15)];
      x >>= 4;
    }
    return key;
  }

  // The smallest x with KeyAt(x) >= key, or nullopt when every key of the space is smaller.
  std::optional<uint128> FirstAtOrAbove(std::string_view key) const {
    if (key <= prefix_) return uint128(0);
    if (!key.starts_with(prefix_)) return std::nullopt;  // differs upwards within the prefix
    const std::string_view digits = key.substr(prefix_.size());
    uint128 x = 0;
    for (int i = 0; i < kDigits; ++i) {
      if (static_cast<size_t>(i) == digits.size()) return x << (4 * (kDigits - i));
      const char c = digits[i];
      const int d = HexValue(c);
      if (d >= 0) {
        x = (x << 4) | d;
        continue;
      }
      // Not a digit: the next key of the space has the smallest digit above c here, or, when
      // c is above 'f', the digits before it incremented.
      const int rest = 4 * (kDigits - 1 - i);
      if (c < '0') return (x << 4) << rest;
      if (c < 'a') return ((x << 4) | 10) << rest;
      if (i == 0 || x == (uint128(1) << (4 * i)) - 1) return std::nullopt;
      return (x + 1) << (4 * (kDigits - i));
    }
    if (digits.size() == static_cast<size_t>(kDigits)) return x;
    if (x == absl::Uint128Max()) return std::nullopt;
    return x + 1;
  }

 private:
  std::string prefix_;
};

bool Readable(const rocksdb::Iterator& it) { return it.Valid() || it.status().ok(); }

absl::Status NotCorruption(const rocksdb::Status& s) {
  return absl::UnavailableError(absl::StrCat("reading past damaged blocks: ", s.ToString()));
}

// Seeks with a new iterator each time: after a seek into a damaged block, RocksDB 7.8's table
// iterator may take the next seek into the last block it read for the same block (it compares
// block offsets it did not update) and report the end of the data instead of reading it.
class Seeker {
 public:
  Seeker(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family) : db_(db), family_(family) {
    read_.verify_checksums = true;
    read_.fill_cache = false;
  }
  std::unique_ptr<rocksdb::Iterator> Seek(const std::string& target) const {
    std::unique_ptr<rocksdb::Iterator> it(db_.NewIterator(read_, family_));
    if (target.empty()) {
      it->SeekToFirst();
    } else {
      it->Seek(target);
    }
    return it;
  }

 private:
  rocksdb::DB& db_;
  rocksdb::ColumnFamilyHandle* family_;
  rocksdb::ReadOptions read_;
};

// An iterator at the first readable key at or after KeyAt(from), probing up to KeyAt(last),
// or null when every probe up to `last` hits damage. `known` is sorted.
absl::StatusOr<std::unique_ptr<rocksdb::Iterator>> SeekPastDamage(
    const Seeker& seeker, const KeySpace& space, uint128 from, uint128 last, uint128 step,
    const std::vector<std::string>& known) {
  std::optional<uint128> damaged;  // the last probe that hit damage
  uint128 p = from;
  std::unique_ptr<rocksdb::Iterator> it;
  for (int damaged_probes = 0;; ++damaged_probes) {
    const std::string target = space.KeyAt(p);
    it = seeker.Seek(target);
    if (Readable(*it)) break;
    if (!it->status().IsCorruption()) return NotCorruption(it->status());
    damaged = p;
    if (p == last) return nullptr;
    if (damaged_probes > 0 && damaged_probes % kProbesPerWidening == 0 &&
        step <= absl::Uint128Max() / 2) {
      step <<= 1;
    }
    uint128 next = last - p <= step ? last : p + step;
    // A key known to exist before the next probe is tried first.
    const auto k = std::upper_bound(known.begin(), known.end(), target);
    if (k != known.end()) {
      const std::optional<uint128> at = space.FirstAtOrAbove(*k);
      if (at && *at > p && *at < next) next = *at;
    }
    p = next;
  }
  if (!damaged) return it;
  // Seek(KeyAt(lo)) hits damage and Seek(KeyAt(hi)) reads: the first readable target is the
  // start of the next readable block, and seeking there skips none of its records.
  uint128 lo = *damaged, hi = p;
  while (hi - lo > 1) {
    const uint128 mid = lo + (hi - lo) / 2;
    it = seeker.Seek(space.KeyAt(mid));
    if (Readable(*it)) {
      hi = mid;
    } else if (it->status().IsCorruption()) {
      lo = mid;
    } else {
      return NotCorruption(it->status());
    }
  }
  it = seeker.Seek(space.KeyAt(hi));
  if (Readable(*it)) return it;
  if (!it->status().IsCorruption()) return NotCorruption(it->status());
  return nullptr;
}

}  // namespace

absl::StatusOr<ReadableRecordsReport> ReadReadableRecords(
    rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family, const ReadableRecordsOptions& options,
    const std::function<void(std::string_view key, std::string_view value)>& fn) {
  const KeySpace space(options.key_prefix);
  std::vector<std::string> known = options.known_keys;
  std::sort(known.begin(), known.end());

  // The part of the key space within the bounds: [first, last].
  const uint128 first = space.FirstAtOrAbove(options.lower).value_or(absl::Uint128Max());
  std::optional<uint128> last = absl::Uint128Max();
  if (!options.upper.empty()) {
    const std::optional<uint128> above = space.FirstAtOrAbove(options.upper + '\0');
    if (above.has_value()) last = *above == 0 ? std::nullopt : std::optional(*above - 1);
  }
  const int64_t expected = std::max(options.expected_records, kDefaultExpectedRecords);
  uint128 step = 1;
  if (last && *last > first) {
    step = std::max<uint128>(
        1, (*last - first) / (static_cast<uint64_t>(expected) * kProbesPerRecord));
  }

  const Seeker seeker(db, family);
  std::unique_ptr<rocksdb::Iterator> it = seeker.Seek(options.lower);
  ReadableRecordsReport report;
  std::string previous;  // the last key read
  bool any = false;
  while (true) {
    for (; it->Valid(); it->Next()) {
      const rocksdb::Slice key = it->key();
      if (!options.upper.empty() && key.compare(options.upper) > 0) return report;
      fn(key.ToStringView(), it->value().ToStringView());
      ++report.read;
      previous.assign(key.data(), key.size());
      any = true;
    }
    if (it->status().ok()) return report;
    if (!it->status().IsCorruption()) return NotCorruption(it->status());
    if (report.damaged_ranges++ == 0) report.first_damage = it->status().ToString();
    const std::optional<uint128> from = space.FirstAtOrAbove(any ? previous + '\0' : options.lower);
    if (!from || !last || *from > *last) return report;
    absl::StatusOr<std::unique_ptr<rocksdb::Iterator>> resumed =
        SeekPastDamage(seeker, space, *from, *last, step, known);
    if (!resumed.ok()) return resumed.status();
    if (*resumed == nullptr) return report;
    it = *std::move(resumed);
  }
}

}  // namespace pto::cache
