#include "tools/npy.h"

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace pto::tools {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kAlign = 64;

// A Python literal as it appears in a .npy header.
struct PyValue {
  enum class Kind { kString, kBool, kInt, kTuple, kList };
  Kind kind = Kind::kInt;
  std::string str;
  bool boolean = false;
  int64_t integer = 0;
  std::vector<PyValue> items;
};

// Parses the header dict: a Python literal of strings, True/False, ints (Python 2's "3L"
// too), tuples and lists. Returns an empty string on success, else what went wrong.
// Tuples and lists nest at most kMaxDepth deep (numpy's headers nest a few levels), so a hostile
// header cannot overflow the stack of this recursive descent.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  std::string ParseDict(std::map<std::string, PyValue>& dict) {
    if (!Consume('{')) return Expected("'{'");
    while (!Consume('}')) {
      PyValue key;
      if (std::string e = ParseValue(key); !e.empty()) return e;
      if (key.kind != PyValue::Kind::kString) return Error("a key is not a string");
      if (!Consume(':')) return Expected("':'");
      PyValue value;
      if (std::string e = ParseValue(value); !e.empty()) return e;
      if (!dict.emplace(key.str, std::move(value)).second) {
        return Error(absl::StrCat("key '", key.str, "' appears twice"));
      }
      if (!Consume(',') && !Peek('}')) return Expected("',' or '}'");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Expected("the end of the header");
    return "";
  }

 private:
  static constexpr int kMaxDepth = 32;

  std::string ParseValue(PyValue& v, int depth = 0) {
    SkipSpace();
    if (pos_ >= text_.size()) return Expected("a value");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') {
      size_t end = text_.find(c, pos_ + 1);
      if (end == std::string_view::npos) return Error("unterminated string");
      v.kind = PyValue::Kind::kString;
      v.str = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
      pos_ = end + 1;
      return "";
    }
    if (c == '(' || c == '[') {
      if (depth == kMaxDepth) {
        return Error(absl::StrCat("values nested more than ", kMaxDepth, " deep"));
      }
      const char close = c == '(' ? ')' : ']';
      v.kind = c == '(' ? PyValue::Kind::kTuple : PyValue::Kind::kList;
      ++pos_;
      while (!Consume(close)) {
        PyValue item;
        if (std::string e = ParseValue(item, depth + 1); !e.empty()) return e;
        v.items.push_back(std::move(item));
        if (!Consume(',') && !Peek(close))
          return Expected(absl::StrCat("',' or '", std::string(1, close), "'"));
      }
      return "";
    }
    if (c == '-' || (c >= '0' && c <= '9')) return ParseInt(v);
    for (auto [word, value] : {std::pair<std::string_view, bool>("True", true),
                               std::pair<std::string_view, bool>("False", false)}) {
      if (text_.substr(pos_, word.size()) == word) {
        v.kind = PyValue::Kind::kBool;
        v.boolean = value;
        pos_ += word.size();
        return "";
      }
    }
    return Expected("a value");
  }

  std::string ParseInt(PyValue& v) {
    const bool negative = text_[pos_] == '-';
    if (negative) ++pos_;
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') return Expected("a digit");
    uint64_t magnitude = 0;
    constexpr uint64_t kLimit = uint64_t{1} << 63;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      magnitude = magnitude * 10 + static_cast<uint64_t>(text_[pos_++] - '0');
      if (magnitude > kLimit) return Error("integer out of range");
    }
    if (!negative && magnitude == kLimit) return Error("integer out of range");
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long
    v.kind = PyValue::Kind::kInt;
    v.integer = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    return "";
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool Consume(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }
  std::string Error(absl::string_view what) {
    return absl::StrCat(what, " at header offset ", pos_);
  }
  std::string Expected(absl::string_view what) { return Error(absl::StrCat("expected ", what)); }

  std::string_view text_;
  size_t pos_ = 0;
};

std::string ShapeText(const std::vector<int64_t>& shape) {
  // Python's tuple repr: (), (5,), (2, 3).
  if (shape.size() == 1) return absl::StrCat("(", shape[0], ",)");
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

uint64_t LoadLe(std::string_view bytes, size_t offset, int width) {
  uint64_t v = 0;
  for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(bytes[offset + i]);
  return v;
}

void StoreLe(uint64_t v, int width, std::string& out) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// The element count of `shape`, or nullopt if a dim is negative or the byte size (of the widest
// dtype, 8 bytes) overflows.
std::optional<size_t> ElementCount(const std::vector<int64_t>& shape) {
  constexpr uint64_t kMaxElements = std::numeric_limits<int64_t>::max() / sizeof(double);
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > kMaxElements / static_cast<uint64_t>(d)) return std::nullopt;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

absl::StatusOr<std::vector<int64_t>> ShapeFromHeader(const PyValue& v, absl::string_view name) {
  auto error = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": header 'shape' must be a tuple of non-negative ints"));
  };
  if (v.kind != PyValue::Kind::kTuple) return error();
  std::vector<int64_t> shape;
  for (const PyValue& item : v.items) {
    if (item.kind != PyValue::Kind::kInt || item.integer < 0) return error();
    shape.push_back(item.integer);
  }
  return shape;
}

// Where the preamble (magic string, version, header length) puts the header.
struct HeaderSpan {
  size_t start = 0;
  uint64_t length = 0;
};

absl::StatusOr<HeaderSpan> ReadPreamble(std::string_view bytes, absl::string_view name) {
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": not a .npy file (it does not start with \"\\x93NUMPY\")"));
  }
  if (bytes.size() < 10) {
    return absl::DataLossError(
        absl::StrCat(name, ": truncated in the .npy preamble (", bytes.size(), " bytes)"));
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  const int minor = static_cast<uint8_t>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return absl::UnimplementedError(absl::StrCat(name, ": .npy format version ", major, ".", minor,
                                                 " is not supported (1.0, 2.0, 3.0 are)"));
  }
  const int len_width = major == 1 ? 2 : 4;
  HeaderSpan span;
  span.start = 8 + len_width;
  if (bytes.size() < span.start) {
    return absl::DataLossError(
        absl::StrCat(name, ": truncated in the .npy preamble (", bytes.size(), " bytes)"));
  }
  span.length = LoadLe(bytes, 8, len_width);
  if (bytes.size() - span.start < span.length) {
    return absl::DataLossError(absl::StrCat(name, ": header is truncated: expected ", span.length,
                                            " bytes, got ", bytes.size() - span.start));
  }
  return span;
}

// The header dict, with exactly the keys descr, fortran_order and shape.
absl::StatusOr<std::map<std::string, PyValue>> ParseHeader(std::string_view header,
                                                           absl::string_view name) {
  std::map<std::string, PyValue> dict;
  if (std::string e = HeaderParser(header).ParseDict(dict); !e.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": malformed header: ", e));
  }
  for (const char* key : {"descr", "fortran_order", "shape"}) {
    if (!dict.contains(key)) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": header has no '", key, "' key"));
    }
  }
  if (dict.size() != 3) {
    for (const auto& [key, value] : dict) {
      if (key != "descr" && key != "fortran_order" && key != "shape") {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": header has an unexpected key '", key, "'"));
      }
    }
  }
  return dict;
}

// A dtype .npy files carry here: its descr and element width.
struct NpyDType {
  ir::DType dtype;
  const char* descr;
  int width;
};
constexpr NpyDType kDTypes[] = {
    {ir::DType::kF32, "<f4", 4}, {ir::DType::kI32, "<i4", 4}, {ir::DType::kF64, "<f8", 8}};
constexpr char kDescrs[] = "'<f4', '<i4' or '<f8'";

const NpyDType* FindDType(ir::DType dtype) {
  for (const NpyDType& d : kDTypes) {
    if (d.dtype == dtype) return &d;
  }
  return nullptr;
}

// The dtype of the descr ('<f4', '<i4', '<f8'), in C order.
absl::StatusOr<NpyDType> CheckDtypeAndOrder(const std::map<std::string, PyValue>& dict,
                                            absl::string_view name) {
  const PyValue& descr = dict.at("descr");
  if (descr.kind != PyValue::Kind::kString) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": descr is a structured dtype, which is not supported (only ", kDescrs, ")"));
  }
  const NpyDType* found = nullptr;
  for (const NpyDType& d : kDTypes) {
    if (descr.str == d.descr) found = &d;
  }
  if (found == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": descr '", descr.str, "' is not supported (only ", kDescrs, ")"));
  }
  const PyValue& fortran = dict.at("fortran_order");
  if (fortran.kind != PyValue::Kind::kBool) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": header 'fortran_order' must be True or False"));
  }
  if (fortran.boolean) {
    return absl::UnimplementedError(
        absl::StrCat(name,
                     ": fortran_order True (column-major) is not supported; save a C-order array, "
                     "e.g. numpy.ascontiguousarray(a)"));
  }
  return *found;
}

// The array from the bytes after the header, which must be exactly `count` elements of `type`.
absl::StatusOr<NpyArray> ReadData(std::string_view data, std::vector<int64_t> shape, size_t count,
                                  const NpyDType& type, absl::string_view name) {
  const size_t expected = count * type.width;
  if (data.size() < expected) {
    return absl::DataLossError(absl::StrCat(name, ": data is truncated: shape ", ShapeText(shape),
                                            " needs ", expected, " bytes, the file has ",
                                            data.size()));
  }
  if (data.size() > expected) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", data.size() - expected,
                                                   " unexpected bytes after the ", expected,
                                                   " data bytes of shape ", ShapeText(shape)));
  }
  NpyArray array;
  array.shape = std::move(shape);
  array.dtype = type.dtype;
  switch (type.dtype) {
    case ir::DType::kF32:
      array.data.resize(count);
      for (size_t i = 0; i < count; ++i) {
        array.data[i] = std::bit_cast<float>(static_cast<uint32_t>(LoadLe(data, 4 * i, 4)));
      }
      break;
    case ir::DType::kI32:
      array.wide.resize(count);
      for (size_t i = 0; i < count; ++i) {
        array.wide[i] = std::bit_cast<int32_t>(static_cast<uint32_t>(LoadLe(data, 4 * i, 4)));
      }
      break;
    default:  // kF64
      array.wide.resize(count);
      for (size_t i = 0; i < count; ++i) {
        array.wide[i] = std::bit_cast<double>(LoadLe(data, 8 * i, 8));
      }
      break;
  }
  return array;
}

}  // namespace

absl::StatusOr<NpyArray> ParseNpy(std::string_view bytes, std::string_view file_name) {
  // This Abseil build has its own string_view type.
  const absl::string_view name(file_name.data(), file_name.size());
  absl::StatusOr<HeaderSpan> span = ReadPreamble(bytes, name);
  if (!span.ok()) return span.status();
  absl::StatusOr<std::map<std::string, PyValue>> dict =
      ParseHeader(bytes.substr(span->start, span->length), name);
  if (!dict.ok()) return dict.status();
  absl::StatusOr<NpyDType> type = CheckDtypeAndOrder(*dict, name);
  if (!type.ok()) return type.status();
  absl::StatusOr<std::vector<int64_t>> shape = ShapeFromHeader(dict->at("shape"), name);
  if (!shape.ok()) return shape.status();
  std::optional<size_t> count = ElementCount(*shape);
  if (!count.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": shape ", ShapeText(*shape), " is too large"));
  }
  return ReadData(bytes.substr(span->start + span->length), *std::move(shape), *count, *type, name);
}

absl::StatusOr<std::string> SerializeNpy(const NpyArray& array) {
  std::optional<size_t> count = ElementCount(array.shape);
  if (!count.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", ShapeText(array.shape), " has a negative dim or is too large"));
  }
  const NpyDType* type = FindDType(array.dtype);
  if (type == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("dtype ", std::string(ir::DTypeName(array.dtype)),
                     " has no .npy descr here (f32, i32 and f64 do)"));
  }
  if (*count != static_cast<size_t>(array.size())) {
    return absl::InvalidArgumentError(absl::StrCat("shape ", ShapeText(array.shape), " has ",
                                                   *count, " elements but data has ",
                                                   array.size()));
  }
  if (array.dtype == ir::DType::kI32) {
    for (size_t i = 0; i < array.wide.size(); ++i) {
      const double v = array.wide[i];
      if (!(v == std::trunc(v) && v >= std::numeric_limits<int32_t>::min() &&
            v <= std::numeric_limits<int32_t>::max())) {
        char value[32];
        std::snprintf(value, sizeof(value), "%.17g", v);
        return absl::InvalidArgumentError(
            absl::StrCat("i32 element ", i, " is ", value, ", not an int32"));
      }
    }
  }
  std::string header =
      absl::StrCat("{'descr': '", type->descr,
                   "', 'fortran_order': False, 'shape': ", ShapeText(array.shape), ", }");
  // As numpy.lib.format: pad with spaces so that data starts at a multiple of kAlign, then a
  // newline; a header already aligned still gets kAlign spaces.
  const bool v1 = header.size() + 1 + kAlign <= 0xffff;  // the u16 length field is enough
  const int major = v1 ? 1 : 2;
  const size_t preamble = v1 ? 10 : 12;
  const size_t pad = kAlign - (preamble + header.size() + 1) % kAlign;
  header.append(pad, ' ');
  header.push_back('\n');

  std::string out(kMagic);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  StoreLe(header.size(), major == 1 ? 2 : 4, out);
  out += header;
  out.reserve(out.size() + *count * type->width);
  switch (array.dtype) {
    case ir::DType::kF32:
      for (float v : array.data) StoreLe(std::bit_cast<uint32_t>(v), 4, out);
      break;
    case ir::DType::kI32:
      for (double v : array.wide) {
        StoreLe(std::bit_cast<uint32_t>(static_cast<int32_t>(v)), 4, out);
      }
      break;
    default:  // kF64
      for (double v : array.wide) StoreLe(std::bit_cast<uint64_t>(v), 8, out);
      break;
  }
  return out;
}

absl::StatusOr<NpyArray> ReadNpy(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    int err = errno;
    return absl::ErrnoToStatus(err, absl::StrCat("cannot open ", path));
  }
  std::string bytes;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return ParseNpy(bytes, path);
}

absl::Status WriteNpy(const std::string& path, const NpyArray& array) {
  absl::StatusOr<std::string> bytes = SerializeNpy(array);
  if (!bytes.ok()) {
    return absl::Status(bytes.status().code(), absl::StrCat(path, ": ", bytes.status().message()));
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    int err = errno;
    return absl::ErrnoToStatus(err, absl::StrCat("cannot create ", path));
  }
  const bool wrote = std::fwrite(bytes->data(), 1, bytes->size(), f) == bytes->size();
  const int write_err = errno;
  if (std::fclose(f) != 0 || !wrote) {
    return absl::ErrnoToStatus(wrote ? errno : write_err, absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

}  // namespace pto::tools
