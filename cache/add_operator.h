// A RocksDB merge operator that adds signed 64-bit integers (8 bytes, little-endian). The
// cache's counters of all processes (hits, misses, corrupt, puts, compiles) are merge
// operands, so each process adds its own deltas without reading first, from the writer or
// through the inbox.
#ifndef PTO_CACHE_ADD_OPERATOR_H_
#define PTO_CACHE_ADD_OPERATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace rocksdb {
class MergeOperator;
}  // namespace rocksdb

namespace pto::cache {

std::shared_ptr<rocksdb::MergeOperator> NewAddInt64Operator();
std::string EncodeInt64(int64_t value);
// 0 for a value that is not 8 bytes (a damaged counter restarts from what is merged next).
int64_t DecodeInt64(std::string_view bytes);

}  // namespace pto::cache

#endif  // PTO_CACHE_ADD_OPERATOR_H_
