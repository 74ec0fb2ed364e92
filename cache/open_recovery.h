// Damage that stops RocksDB from opening a cache database and that rocksdb::RepairDB fixes
// (it rebuilds the MANIFEST from the table files), so that the writer repairs the cache
// instead of giving it up for a memory-only one on every later run.
#ifndef PTO_CACHE_OPEN_RECOVERY_H_
#define PTO_CACHE_OPEN_RECOVERY_H_

#include <optional>
#include <string>

namespace rocksdb {
class Status;
}  // namespace rocksdb

namespace pto::cache {

// Checked before opening: CURRENT is missing but table files remain. RocksDB would start a
// new, empty database beside them (or refuse to, if a log file remains). Returns what is
// wrong, or nullopt. (A database being created has no table files before its CURRENT.)
std::optional<std::string> DamageBeforeOpen(const std::string& path);

// Whether DB::Open's `status` for the database at `path` is damage RepairDB fixes: Corruption
// (an unreadable MANIFEST or CURRENT, a truncated table file), or CURRENT naming a MANIFEST
// that does not exist, which RocksDB reports as an I/O error ("No such file or directory").
bool IsRepairableDamage(const rocksdb::Status& status, const std::string& path);

}  // namespace pto::cache

#endif  // PTO_CACHE_OPEN_RECOVERY_H_
