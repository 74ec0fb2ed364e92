#include "cache/add_operator.h"

#include <cstring>

#include "rocksdb/merge_operator.h"

namespace pto::cache {
namespace {

class AddInt64Operator final : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& /*key*/, const rocksdb::Slice* existing_value,
             const rocksdb::Slice& value, std::string* new_value,
             rocksdb::Logger* /*logger*/) const override {
    int64_t sum = DecodeInt64(value.ToStringView());
    if (existing_value != nullptr) sum += DecodeInt64(existing_value->ToStringView());
    *new_value = EncodeInt64(sum);
    return true;
  }
  const char* Name() const override { return "pto.AddInt64"; }
};

}  // namespace

std::shared_ptr<rocksdb::MergeOperator> NewAddInt64Operator() {
  return std::make_shared<AddInt64Operator>();
}

std::string EncodeInt64(int64_t value) {
  std::string bytes(8, '\0');
  const uint64_t u = static_cast<uint64_t>(value);
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return bytes;
}

int64_t DecodeInt64(std::string_view bytes) {
  if (bytes.size() != 8) return 0;
  uint64_t u = 0;
  for (int i = 0; i < 8; ++i) u |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  return static_cast<int64_t>(u);
}

}  // namespace pto::cache
